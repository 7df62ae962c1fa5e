// One governed attempt: through the rate governor, counted, debug-logged and traced (never with
// headers: a span holds the method, the path without its query, the status).
import type { Dispatcher } from "undici";
import type { OperationDef } from "../catalogue/types.ts";
import type { TraceAttributes, Tracer, TraceSpan } from "../tracing/tracer.ts";
import type { Logger } from "../util/logger.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";
import type { Secret } from "../util/secret.ts";
import type { CircuitBreakers } from "./breaker.ts";
import { bodyTimestamp, type ServerClock } from "./clock.ts";
import { ApiError, AuthError, HttpStatusError, RateLimitedError } from "./errors.ts";
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
  readonly tracer: Tracer;
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
    readonly span?: TraceSpan | undefined;
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
  const span = s.tracer.startSpan(c.request.method, requestAttributes(c, n), c.req.span, "client");
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
    span.setAttributes({ "http.response.status_code": result.status, "http.response.body.size": result.bytes });
    return { ...result, sendMs };
  } catch (e) {
    const limited = e instanceof RateLimitedError;
    if (limited) s.stats.rateLimited++;
    permit.release(limited ? "rate-limited" : "failed");
    s.breakers.failed(c.request.origin, e);
    s.metrics.attempt(c.op.id, e, performance.now() - t0, s.governor.rate);
    const status = e instanceof HttpStatusError || e instanceof AuthError ? e.status : undefined;
    const error = e instanceof ApiError ? e.name : "Aborted";
    s.log?.debug({ ...fields, status, ms: Math.round(performance.now() - t0), error }, "api request failed");
    span.setAttributes({ "http.response.status_code": status, "error.type": error });
    // ApiError messages are masked already (api/errors.ts); the tracer masks every string again.
    span.fail(e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    span.end();
  }
}

/** An HTTP client span's attributes (OpenTelemetry's HTTP conventions): no header, no query string. */
function requestAttributes(c: Call, n: number): TraceAttributes {
  const origin = new URL(c.request.origin);
  return {
    "http.request.method": c.request.method,
    "url.path": c.request.path.split("?")[0],
    "server.address": origin.hostname,
    "server.port": Number(origin.port) || (origin.protocol === "https:" ? 443 : 80),
    "http.request.resend_count": n > 1 ? n - 1 : undefined,
    "apm.operation": c.op.id,
    "apm.pcode": c.req.pcode,
  };
}
