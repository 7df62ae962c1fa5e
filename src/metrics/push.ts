// One-shot runs (`sync`, `backfill`, a `worker --until-idle`) push their metrics to a Prometheus
// Pushgateway when they end (APM_PUSHGATEWAY_URL): the Prometheus way for batch jobs, which are
// gone before any scrape. A PUT replaces the group's previous push, so the gateway holds the last
// run of each command (and host); the ledger gauges in it are read at push time.
import { hostname } from "node:os";
import { Pushgateway, type Registry } from "prom-client";
import { describeError } from "../engine/describe-error.ts";
import type { Logger } from "../util/logger.ts";

/** The job label of every push. */
export const PUSH_JOB = "apm-sync";

const PUSH_TIMEOUT_MS = 10_000;

/** Grouping key of a push: the command, and the host for workers (each worker's last run is kept). */
export function pushGrouping(command: string): Record<string, string> {
  return command === "worker" ? { command, instance: hostname() } : { command };
}

/** Pushes `registry`; a failure is a warning (the run's own outcome and exit code stand). */
export async function pushMetrics(registry: Registry, url: string, command: string, logger: Logger): Promise<boolean> {
  try {
    const gateway = new Pushgateway(url, { timeout: PUSH_TIMEOUT_MS }, registry);
    await gateway.push({ jobName: PUSH_JOB, groupings: pushGrouping(command) });
    logger.debug(`metrics pushed to ${safeUrl(url)}`);
    return true;
  } catch (e) {
    logger.warn(`metrics were not pushed to the Pushgateway ${safeUrl(url)}: ${describeError(e)}`);
    return false;
  }
}

/** The URL without user and password (a gateway behind basic auth). */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return "(not a URL: check APM_PUSHGATEWAY_URL)";
  }
}

/**
 * Pushes for a process that keeps running (a `worker` without APM_METRICS_PORT): after each job,
 * at most once per `everyMs`, never two at once. A one-shot run pushes when it ends; a worker
 * that never ends pushed nothing, so a queued backfill's lag and watermark gauges never reached
 * Prometheus and the stale-stream alert could not see it.
 */
export function jobPusher(push: () => Promise<unknown>, everyMs: number): { poke(): void; flush(): Promise<void> } {
  let last = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const go = (): Promise<void> => {
    timer = null;
    last = performance.now();
    running = push().then(
      () => undefined,
      () => undefined,
    );
    return running.finally(() => {
      running = null;
    });
  };
  return {
    poke() {
      if (timer) return;
      const wait = Math.max(0, last + everyMs - performance.now());
      timer = setTimeout(() => void (running ?? Promise.resolve()).then(go), wait);
    },
    /** Waits for a push under way, and makes one that was waiting for its turn now. */
    async flush() {
      const waiting = timer !== null;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
      if (waiting) await go();
    },
  };
}
