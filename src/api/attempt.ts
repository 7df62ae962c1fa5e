// One governed attempt: through the rate governor, counted, debug-logged (never with headers).
import type { Dispatcher } from "undici";
import type { OperationDef } from "../catalogue/types.ts";
import type { MetricsObserver } from "../metrics/observer.ts";
import type { Logger } from "../util/logger.ts";
import type { Secret } from "../util/secret.ts";
import type { CircuitBreakers } from "./breaker.ts";
import { bodyTimestamp, type ServerClock } from "./clock.ts";
import { ApiError, HttpStatusError, RateLimitedError } from "./errors.ts";
import type { RateGovernor } from "./governor.ts";
import type { BuiltRequest } from "./request.ts";
import { type AttemptResult, sendOnce } from "./send.ts";
import type { MemoryBudget } from "./spool.ts";

/** What an attempt needs of its client. */
export interface AttemptState {
  readonly api: {
    readonly tokenHeader: string;
    readonly timeoutMs: number;
    readonly maxResponseBytes: number;
    readonly maxRecordBytes: number;
  };
  /** The memory every answer in flight draws on (api/spool.ts). */
  readonly budget: MemoryBudget;
  readonly log: Logger | undefined;
  readonly secrets: readonly Secret[];
  readonly governor: RateGovernor;
  readonly stats: { requests: number; rateLimited: number };
  readonly clock: ServerClock;
  readonly metrics: Pick<MetricsObserver, "attempt">;
  readonly breakers: CircuitBreakers;
}

/** An answer and the time from send to answer (the governor's wait left out). */
export type TimedAttempt = AttemptResult & { readonly sendMs: number };

/** One call's request, built once for all its attempts. */
export interface Call {
  readonly op: OperationDef;
  readonly req: {
    readonly pcode?: number | undefined;
    readonly signal?: AbortSignal | undefined;
    readonly onAttempt?: (() => void) | undefined;
  };
  readonly request: BuiltRequest;
  readonly headers: Readonly<Record<string, string>>;
  readonly dispatcher: Dispatcher;
}

/** One attempt through the governor: counted, debug-logged (never with headers), outcome fed back. */
export async function governedAttempt(s: AttemptState, c: Call, n: number): Promise<TimedAttempt> {
  const permit = await s.governor.acquire();
  try {
    if (c.req.signal?.aborted) throw c.req.signal.reason;
    s.breakers.check();
  } catch (e) {
    permit.release("failed");
    throw e;
  }
  s.stats.requests++;
  c.req.onAttempt?.();
  const t0 = performance.now();
  const fields = { op: c.op.id, pcode: c.req.pcode, path: c.request.path, attempt: n };
  try {
    const result = await sendOnce(c.dispatcher, {
      op: c.op,
      request: c.request,
      headers: c.headers,
      ctx: { opId: c.op.id, pcode: c.req.pcode, path: c.request.path, attempt: n },
      secrets: s.secrets,
      tokenHeader: s.api.tokenHeader,
      timeoutMs: s.api.timeoutMs,
      limits: { maxBytes: s.api.maxResponseBytes, maxRecordBytes: s.api.maxRecordBytes, budget: s.budget },
      signal: c.req.signal,
      onDate: (date) => s.clock.observeDate(date),
      now: s.clock.localNow,
    });
    // Some answers say when the server produced them, to the millisecond (the catalogue's clockField).
    if (c.op.clockField) s.clock.observeTimestamp(bodyTimestamp(result.body.envelope, c.op.clockField));
    permit.release("ok");
    s.breakers.answered(c.request.origin);
    const sendMs = Math.round(performance.now() - t0);
    s.metrics.attempt(c.op.id, result.status, sendMs, s.governor.rate);
    s.log?.debug({ ...fields, status: result.status, ms: sendMs, bytes: result.bytes }, "api request");
    return { ...result, sendMs };
  } catch (e) {
    const limited = e instanceof RateLimitedError;
    if (limited) s.stats.rateLimited++;
    permit.release(limited ? "rate-limited" : "failed");
    s.breakers.failed(c.request.origin, e);
    s.metrics.attempt(c.op.id, e, performance.now() - t0, s.governor.rate);
    const status = e instanceof HttpStatusError ? e.status : undefined;
    const error = e instanceof ApiError ? e.name : "Aborted";
    s.log?.debug({ ...fields, status, ms: Math.round(performance.now() - t0), error }, "api request failed");
    throw e;
  }
}
