// `apm-sync status [--json]`: per project and stream: watermark, lag, last write, failed/truncated
// windows, quarantined records. Needs only the database.
import { withApp } from "../src/app.ts";
import { readStatus } from "../src/db/readStatus.ts";
import { formatStatus } from "../src/report/format-status.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  return withApp({ global, needsApi: false }, async ({ database }) => {
    const report = await readStatus(database.sql, Date.now());
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
    return 0;
  });
}
