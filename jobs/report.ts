// `apm-sync report [--out FILE] [--json] [--from T] [--to T] [--projects ..]`: coverage, freshness
// and the data on one self-contained HTML page (or its figures as JSON). Needs only the database.
import { writeFile } from "node:fs/promises";
import { withApp } from "../src/app.ts";
import { DEFAULT_REPORT_FILE, makeReport, type ReportRequest, redactTokens, writeHtmlReport } from "../src/report/make-report.ts";
import { terminalSafeJson } from "../src/util/terminal-text.ts";
import { parseProjects, parseTimeFlag } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  let request: Omit<ReportRequest, "now" | "settleMs"> = { from: null, to: null, projects: null };
  // Bad flags are usage errors (exit 2), found before the database is opened.
  const validate = () => {
    const now = Date.now();
    request = {
      from: opts.from === undefined ? null : parseTimeFlag(opts.from, "--from", now),
      to: opts.to === undefined ? null : parseTimeFlag(opts.to, "--to", now),
      projects: parseProjects(opts.projects),
    };
  };
  return withApp({ global, needsApi: false, warehouse: "existing", validate }, async ({ database, config, deps, out: print }) => {
    const model = await makeReport(database.sql, { ...request, now: deps.now(), settleMs: config.sync.settleMs });
    const out = typeof opts.out === "string" ? opts.out : null;
    if (opts.json) {
      // With JSON logs every line is JSON: the document on one line.
      const json = redactTokens(terminalSafeJson(`${JSON.stringify(model, null, config.log.format === "json" ? undefined : 2)}\n`), config);
      if (out) await writeFile(out, json);
      else process.stdout.write(json);
      return 0;
    }
    const path = await writeHtmlReport(model, config, out ?? DEFAULT_REPORT_FILE);
    print.print(path, { msg: "report written", path });
    return 0;
  });
}
