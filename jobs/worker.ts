// `apm-sync worker [--concurrency N] [--until-idle]`: runs queued jobs with the same engine as the
// CLI. SIGTERM/SIGINT: no new job; jobs in flight finish their windows or go back to the queue.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { printSummary } from "../src/engine/summary.ts";
import { queueUrl } from "../src/queue/queue.ts";
import { runWorker } from "../src/queue/worker.ts";
import { UsageError } from "../src/usage-error.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const concurrency = Number(opts.concurrency ?? 2);
  const validate = (config: Config) => {
    queueUrl(config);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
      throw new UsageError(`--concurrency: expected a whole number from 1 to 64, got ${String(opts.concurrency)}`);
  };
  return withApp({ global, graceful: true, validate }, async ({ deps, out }) => {
    const result = await runWorker(deps, { concurrency, untilIdle: opts.untilIdle === true });
    printSummary(out, result.streams);
    const failed = result.failedForGood > 0 ? `, ${result.failedForGood} failed for good (see \`apm-sync status\`)` : "";
    out.print(`worker run ${result.runId}: ${result.jobs.done} job(s) done, ${result.jobs.retried} to be tried again${failed}`, {
      msg: `worker run ${result.runId}: ${result.failedForGood > 0 ? "jobs failed" : "done"}`,
      runId: result.runId,
      done: result.jobs.done,
      retried: result.jobs.retried,
      failedForGood: result.failedForGood,
    });
    return result.failedForGood > 0 ? 1 : 0;
  });
}
