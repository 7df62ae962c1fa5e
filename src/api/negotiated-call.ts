// One call of the Open API client (api/client.ts): the token negotiated where the spec leaves it
// open, each documented path tried until one answers, retried in one layer (api/retry.ts).

import type { Dispatcher } from "undici";
import type { OperationDef, TokenKind } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Tracer } from "../tracing/tracer.ts";
import type { Logger } from "../util/logger.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";
import type { Secret } from "../util/secret.ts";
import { type Call, governedAttempt, type TimedAttempt } from "./attempt.ts";
import { authHeaders, tokenCandidates } from "./auth.ts";
import type { CircuitBreakers } from "./breaker.ts";
import type { ServerClock } from "./clock.ts";
import { type ApiError, AuthError, HttpStatusError } from "./errors.ts";
import type { RateGovernor } from "./governor.ts";
import { TokenNegotiation } from "./negotiate.ts";
import { type BuiltRequest, buildRequest } from "./request.ts";
import { withRetry } from "./retry.ts";
import type { MemoryBudget } from "./spool.ts";
import type { ApiResponse, ApiStats, CallRequest } from "./types.ts";

/** Shared state of one client: what a single governed attempt needs. */
export interface ClientState {
  readonly api: Config["api"];
  readonly log: Logger | undefined;
  readonly secrets: readonly Secret[];
  readonly governor: RateGovernor;
  readonly stats: ApiStats;
  readonly clock: ServerClock;
  readonly dispatcherFor: (origin: string) => Dispatcher;
  readonly metrics: Pick<MetricsObserver, "attempt" | "retry">;
  readonly budget: MemoryBudget;
  readonly tracer: Tracer;
  breakers: CircuitBreakers;
}

/** Backoff waits and jitter of a client's calls (api/retry.ts). */
export interface CallTiming {
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
}

/**
 * Calls of one client: each with the token the negotiation picks for its operation and project,
 * the other tried when the server refuses it (api/negotiate.ts), each path of an operation that
 * has several until one answers.
 */
export function negotiatingCaller(state: ClientState, timing: CallTiming): (op: OperationDef, req: CallRequest) => Promise<ApiResponse> {
  const negotiation = new TokenNegotiation();
  const paths = new Map<string, number>();
  const announced = new Set<string>();
  return async (op, req) => {
    const started = performance.now();
    const request = buildRequest(op, req.params ?? {}, state.api);
    // Before anything is sent: no usable token is an AuthError here.
    const candidates = tokenCandidates(op, req.pcode, state.api, request.path);
    const key = `${op.id}\u0000${req.pcode ?? ""}`;
    let attempts = 0;
    let refusedStatus: number | undefined;
    for (;;) {
      const choice = negotiation.choose(key, candidates);
      if (choice === null) throw refusedAll(op, req, request, state, negotiation.refusedKinds(key), refusedStatus);
      if ("waitFor" in choice) {
        await choice.waitFor;
        continue;
      }
      try {
        const result = await sendWithPaths(state, { op, req, request }, choice.kind, paths, timing, (n) => {
          attempts += n;
        });
        if (negotiation.accepted(key, choice.kind) && candidates.length > 1)
          announce(state, op, req.pcode, choice.kind, announced, negotiation.refusedKinds(key));
        const { body, status, bytes, url, sendMs } = result;
        return { body, status, attempts, bytes, ms: Math.round(performance.now() - started), sendMs, url, token: choice.kind };
      } catch (e) {
        if (!(e instanceof AuthError) || candidates.length === 1) throw e;
        state.stats.refused++;
        refusedStatus = e.status ?? refusedStatus;
        negotiation.refused(key, choice.kind);
        state.log?.debug({ op: op.id, pcode: req.pcode, token: choice.kind }, "token refused; trying the operation's other token");
      } finally {
        choice.probe?.();
      }
    }
  };
}

/**
 * Sends with retries; an operation with other documented paths (groups: v2 and v1) that answers
 * 404 is tried at the next one, and the path that answered is remembered. A configured override
 * wins. `first` is the request built at the operation's own path (reused, not built again).
 */
async function sendWithPaths(
  s: ClientState,
  { op, req, request: first }: { op: OperationDef; req: CallRequest; request: BuiltRequest },
  kind: TokenKind,
  paths: Map<string, number>,
  d: CallTiming,
  onAttempts: (n: number) => void,
): Promise<TimedAttempt & { url: string }> {
  const templates = op.altPaths && !s.api.overrides[op.id]?.path ? [op.path, ...op.altPaths] : [op.path];
  for (let i = paths.get(op.id) ?? 0; ; i++) {
    const request = i === 0 ? first : buildRequest({ ...op, path: templates[i]! }, req.params ?? {}, s.api);
    const headers = { ...request.headers, ...authHeaders(op, kind, req.pcode, s.api) };
    const c: Call = { op, req, request, headers, dispatcher: s.dispatcherFor(request.origin) };
    let attempts = 0;
    try {
      const result = await withRetry(
        (n) => {
          attempts = n;
          return governedAttempt(s, c, n);
        },
        {
          retries: s.api.retries,
          sleep: d.sleep,
          random: d.random,
          signal: req.signal,
          // A wait ends at once when the server is found unreachable: the call fails saying so.
          stopWaits: req.stopWaits ? [req.stopWaits, s.breakers.opened] : s.breakers.opened,
          waits: req.waits,
          onRetry: (r) => logRetry(s, c, r),
        },
      );
      paths.set(op.id, i);
      return { ...result, url: request.path };
    } catch (e) {
      const notFound = e instanceof HttpStatusError && e.status === 404;
      if (!notFound || i + 1 >= templates.length) throw e;
      s.log?.info(`${op.id}: ${request.path} answered 404; trying ${templates[i + 1]}`);
    } finally {
      onAttempts(attempts);
    }
  }
}

function logRetry(s: ClientState, c: Call, r: { error: ApiError; attempt: number; delayMs: number }): void {
  s.stats.retries++;
  s.metrics.retry(c.op.id, r.error);
  const fields = { op: c.op.id, pcode: c.req.pcode, path: c.request.path, attempt: r.attempt, delayMs: r.delayMs, error: r.error.name };
  s.log?.warn({ ...fields, reason: r.error.message }, "api request will be retried");
  c.req.span?.addEvent("retry", { "apm.attempt": r.attempt, "apm.delay_ms": r.delayMs, "error.type": r.error.name });
}

/** Once per project and operation family: which token the server takes there. */
function announce(s: ClientState, op: OperationDef, pcode: number | undefined, kind: TokenKind, seen: Set<string>, refused: TokenKind[]) {
  const family = `${pcode ?? ""}\u0000${op.area}`;
  if (seen.has(family)) return;
  seen.add(family);
  const after = refused.length > 0 ? ` (the ${refused.join(" and ")} token was refused)` : "";
  s.log?.info(`project ${pcode}: ${op.area} operations use the ${kind} token${after}`);
}

/** Every candidate token refused; `status` is the last refusal's (401/403), for callers to show. */
function refusedAll(op: OperationDef, req: CallRequest, request: BuiltRequest, s: ClientState, refused: TokenKind[], status?: number) {
  const reason = `the server refused ${refused.map((k) => `the ${k} token`).join(" and ")}`;
  const ctx = { opId: op.id, pcode: req.pcode, path: request.path, attempt: 0 };
  return new AuthError(reason, ctx, { secrets: s.secrets, tokenHeader: s.api.tokenHeader, refused, status });
}
