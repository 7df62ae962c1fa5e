// `apm-sync status [--json]`: per project and stream: watermark, lag, last write, failed/truncated
// windows, quarantined records; the configured streams that never ran; failed windows grouped by
// error; the latest restated windows. Needs the database and the configuration (no request is sent).
import { withApp } from "../src/app.ts";
import { queueSchema } from "../src/queue/queue.ts";
import { readQueueStatus } from "../src/queue/read-queue.ts";
import { formatQueue, formatStatus } from "../src/report/format-status.ts";
import { redactTokens } from "../src/report/make-report.ts";
import { readRestatements } from "../src/report/reads/readRestatements.ts";
import { readStatus } from "../src/report/reads/readStatus.ts";
import { expectedStreams, RESTATEMENTS_LISTED, statusModel } from "../src/report/status-model.ts";
import { terminalSafeJson, terminalSafeLines } from "../src/util/terminal-text.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  return withApp({ global, needsApi: false, warehouse: "existing" }, async ({ database, config }) => {
    const { expected, problem } = expectedStreams(config);
    const restated = await readRestatements(database.sql, RESTATEMENTS_LISTED);
    const model = statusModel(await readStatus(database.sql, Date.now()), expected, problem, restated);
    // Workers seen within twice the recovery time count as recent.
    const queue = config.databaseUrl ? await readQueueStatus(database.sql, queueSchema(config), 2 * config.queue.recoveryMs) : null;
    // Errors in the ledger quote servers: control characters escaped, and the configured tokens
    // masked (also in rows an older release wrote).
    const show = (text: string) => process.stdout.write(redactTokens(text, config));
    // With JSON logs every line is JSON: the document on one line.
    if (config.log.format === "json") show(`${terminalSafeJson(JSON.stringify({ ...model, queue }))}\n`);
    else if (opts.json) show(`${terminalSafeJson(JSON.stringify({ ...model, queue }, null, 2))}\n`);
    else show(terminalSafeLines(formatStatus(model) + (queue ? formatQueue(queue) : "")));
    return 0;
  });
}
