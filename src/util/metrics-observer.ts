// The one narrow hook the engine and the API client call for metrics (docs/operating.md
// "Metrics (Prometheus)"). Callers hold an optional observer and call it once per event; the no-op
// default keeps tests and commands without metrics free of any prom-client state.

/** How a window of a stream ended, as the engine counted it. */
export type WindowOutcome = "done" | "failed" | "deferred";

/** What a written window held (the engine's WindowWrite). */
export interface WrittenWindow {
  readonly rows: number;
  readonly quarantined: number;
  /** Sub-windows still cut by the record cap at 5 minutes (the window counts as `truncated`). */
  readonly truncated: number;
}

/** Events of a process, turned into prom-client counters by src/metrics/instruments.ts. */
export interface MetricsObserver {
  /**
   * One HTTP attempt ended: `outcome` is the HTTP status, or the error it failed with (its status
   * when it has one). `rateRps` is the rate governor's allowed rate after the attempt.
   */
  attempt(operation: string, outcome: unknown, ms: number, rateRps: number): void;
  /** The retry layer will try `operation` again after `error`. */
  retry(operation: string, error: unknown): void;
  /** A window (or a snapshot capture) of a stream of one project ended. */
  window(target: { readonly op: { readonly id: string }; readonly pcode: number }, outcome: WindowOutcome, written?: WrittenWindow): void;
  /** A recorded run (sync, backfill, worker process) ended with `status` after `ms`. */
  run(command: string, status: string, ms: number): void;
}

/** The default: nothing is counted. */
export const NO_METRICS: MetricsObserver = {
  attempt: () => {},
  retry: () => {},
  window: () => {},
  run: () => {},
};
