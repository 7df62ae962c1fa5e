// `apm-sync status [--json]`: per project and stream: watermark, lag, last write, failed/truncated
// windows, quarantined records. Needs only the database.
import { withApp } from "../src/app.ts";
import { readStatus } from "../src/db/readStatus.ts";
import { queueSchema } from "../src/queue/queue.ts";
import { readQueueStatus } from "../src/queue/read-queue.ts";
import { formatQueue, formatStatus } from "../src/report/format-status.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  return withApp({ global, needsApi: false }, async ({ database, config }) => {
    const report = await readStatus(database.sql, Date.now());
    // Workers seen within twice the recovery time count as recent.
    const queue = config.databaseUrl ? await readQueueStatus(database.sql, queueSchema(config), 2 * config.queue.recoveryMs) : null;
    if (opts.json) process.stdout.write(`${JSON.stringify({ ...report, queue }, null, 2)}\n`);
    else process.stdout.write(formatStatus(report) + (queue ? formatQueue(queue) : ""));
    return 0;
  });
}
