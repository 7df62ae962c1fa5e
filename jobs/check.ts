// `apm-sync check [--json] [--streams a,b] [--projects 1,2]`: one probe per selected operation and
// project against the configured server; opens no database, writes nothing.
import { withApi } from "../src/app.ts";
import { checkJson, formatCheck } from "../src/check/format.ts";
import { runCheck } from "../src/check/run-check.ts";
import { selectionFlags } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const { selection, validate } = selectionFlags(opts);
  return withApi({ global, validate }, async ({ config, client }) => {
    const report = await runCheck({ config, client, now: Date.now }, selection);
    // With JSON logs every line is JSON: the --json document on one line.
    if (config.log.format === "json") process.stdout.write(checkJson(report, true));
    else process.stdout.write(opts.json ? checkJson(report) : formatCheck(report, config.api));
    return report.ok ? 0 : 1;
  });
}
