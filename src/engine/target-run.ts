// What every target (windowed or snapshot) shares while it runs: its lock, its run, how it is
// stopped, and the one way a failed window (or capture) is handled: a stop abandons it (the next
// run fetches it), a lost lock skips the target, anything else is recorded failed in the ledger
// with its message, and a refused token stops the target.
import { setMaxListeners } from "node:events";
import { CircuitOpenError, gotNoAnswer } from "../api/breaker.ts";
import { AuthError } from "../api/errors.ts";
import { isDiskFull } from "../db/driver/transient.ts";
import type { LockHandle } from "../db/driver/withAdvisoryLock.ts";
import { NO_SPAN, type TraceSpan } from "../tracing/tracer.ts";
import type { Span } from "../windows/intervals.ts";
import { LockLostError, lockedWrite } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import { type EngineDeps, type Target, targetFields, targetLabel, windowFields } from "./types.ts";
import { recordFailedWindow } from "./write-window.ts";

/** One target under way. */
export class TargetRun {
  readonly label: string;
  /** Aborts the target's requests: its own controller, or the end of the shutdown grace. */
  readonly signal: AbortSignal;
  /**
   * The breaker's signal when the target started: a worker's next job may reconnect the client
   * (a new breaker) while this one is still stopping.
   */
  private readonly unreachable: AbortSignal;

  constructor(
    readonly deps: EngineDeps,
    readonly target: Target,
    readonly runId: number | null,
    readonly abort: AbortController,
    readonly lock: LockHandle | undefined,
    /** The target's span: its windows' spans are its children. */
    readonly span: TraceSpan = NO_SPAN,
  ) {
    this.label = targetLabel(target);
    this.signal = deps.hardStop ? AbortSignal.any([abort.signal, deps.hardStop]) : abort.signal;
    // Every request of every window in flight listens to it (APM_WINDOW_CONCURRENCY, 16 by
    // default), past Node's warning at 10 listeners: not a leak, each goes with its request.
    setMaxListeners(0, this.signal);
    this.unreachable = deps.client.unreachable;
  }

  /** No new window: the target was stopped, the run is stopping, or the server cannot be reached. */
  get stopped(): boolean {
    return this.abort.signal.aborted || this.deps.stopping?.aborted === true || this.unreachable.aborted;
  }

  /**
   * Whether `e` is the stop itself (a signal, the target's abort) rather than a failure; and once
   * the server is found unreachable, a failure to reach it is that stop too (api/breaker.ts).
   */
  isStop(e: unknown): boolean {
    if (e instanceof AuthError) return false;
    if (this.unreachable.aborted && (e instanceof CircuitOpenError || gotNoAnswer(e))) return true;
    const { stopping } = this.deps;
    return this.signal.aborted || (stopping?.aborted === true && e === stopping.reason);
  }
}

/** What became of a window that threw. */
export type Failure = "stopped" | "lock-lost" | "failed";

/**
 * Handles a window (or a capture: start = end) that threw after `sent` requests: logs it once,
 * records it failed in its own transaction (its earlier rows stay), and stops the target where
 * going on cannot help (a lost lock, a refused token). Its span says which, with the message.
 */
export async function onWindowFailure(
  run: TargetRun,
  w: Span,
  e: unknown,
  sent: { requests: number; retries: number },
  span: TraceSpan = NO_SPAN,
): Promise<Failure> {
  const outcome = await handleFailure(run, w, e, sent);
  span.setAttributes({ "apm.outcome": outcome });
  if (outcome === "failed") span.fail(describeError(e));
  return outcome;
}

async function handleFailure(run: TargetRun, w: Span, e: unknown, sent: { requests: number; retries: number }): Promise<Failure> {
  const { deps, target, label } = run;
  if (run.isStop(e)) return "stopped";
  if (e instanceof LockLostError) {
    deps.logger.warn(targetFields(target), e.message);
    run.abort.abort(e);
    return "lock-lost";
  }
  const message = describeError(e);
  const where = w.start === w.end ? targetFields(target) : { ...targetFields(target), ...windowFields(w) };
  const what = w.start === w.end ? "" : ` window ${iso(w.start)}..${iso(w.end)}`;
  deps.logger.error(where, `${label}:${what} failed: ${message}`);
  // A full disk refuses the record too: said once, above.
  await lockedWrite(deps, run.lock, label, (tx) => recordFailedWindow(tx, target, w, message, sent, run.runId)).catch((err) => {
    if (!isDiskFull(err)) deps.logger.error(where, `${label}: could not record the failed window: ${describeError(err)}`);
  });
  deps.progress?.windowFailed(target.op.id);
  deps.metrics?.window(target, "failed");
  // A token problem, or a full disk, will not heal by retrying the next window: stop this target.
  if (e instanceof AuthError || isDiskFull(e)) run.abort.abort(e);
  return "failed";
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
