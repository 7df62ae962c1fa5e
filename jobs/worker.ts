// `apm-sync worker [--concurrency N] [--until-idle]`: runs queued jobs with the same engine as the
// CLI. SIGTERM/SIGINT: no new job; jobs in flight finish their windows or go back to the queue.
// With APM_METRICS_PORT it serves /metrics and /healthz while it runs; with --until-idle it is a
// batch job and pushes its metrics to APM_PUSHGATEWAY_URL (when set) at the end.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { printSummary } from "../src/engine/summary.ts";
import { jobPusher, pushMetrics } from "../src/metrics/push.ts";
import { serveMetrics } from "../src/metrics/serve.ts";
import { queueUrl } from "../src/queue/queue.ts";
import { runWorker } from "../src/queue/worker.ts";
import { UsageError } from "../src/usage-error.ts";

/** A worker's pushes after jobs: often enough for a 15 s scrape, not one per short job. */
const PUSH_EVERY_MS = 10_000;

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const concurrency = Number(opts.concurrency ?? 2);
  const untilIdle = opts.untilIdle === true;
  const validate = (config: Config) => {
    queueUrl(config);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
      throw new UsageError(`--concurrency: expected a whole number from 1 to 64, got ${String(opts.concurrency)}`);
  };
  const metrics = { command: "worker", push: untilIdle, processMetrics: true };
  return withApp({ global, graceful: true, validate, metrics, trace: true, queue: true }, async ({ deps, config, out, metrics: m }) => {
    const port = config.metrics.port;
    const unhealthy = () => (deps.stopping?.aborted ? "stopping" : null);
    const host = config.metrics.host;
    const server = m && port !== null ? await serveMetrics({ registry: m.registry, port, host, unhealthy, logger: deps.logger }) : null;
    // Not scraped but given a Pushgateway: push after jobs, as one-shot runs push at their end
    // (the last push is withApp's, with --until-idle). A scraped worker does not push as well.
    const url = config.metrics.pushgatewayUrl;
    const pusher = m && url && !server ? jobPusher(() => pushMetrics(m.registry, url, m.command, deps.logger), PUSH_EVERY_MS) : null;
    try {
      const result = await runWorker(deps, { concurrency, untilIdle, ...(pusher ? { afterJob: pusher.poke } : {}) });
      await pusher?.flush();
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
    } finally {
      await server?.close();
    }
  });
}
