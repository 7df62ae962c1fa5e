// The Open API client: build -> authenticate (negotiating the token where the spec leaves it open)
// -> govern -> send, retried in one layer.
import { type Dispatcher, EnvHttpProxyAgent, Pool } from "undici";
import type { OperationDef, RequestParams, TokenKind } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { type MetricsObserver, NO_METRICS } from "../metrics/observer.ts";
import type { Logger } from "../util/logger.ts";
import { type Call, governedAttempt, type TimedAttempt } from "./attempt.ts";
import { authHeaders, configuredSecrets, tokenCandidates } from "./auth.ts";
import { breakerThreshold, CircuitBreakers } from "./breaker.ts";
import { probeServerClock, ServerClock } from "./clock.ts";
import { type ApiError, AuthError, HttpStatusError } from "./errors.ts";
import { RateGovernor } from "./governor.ts";
import { TokenNegotiation } from "./negotiate.ts";
import { describeCall, type PendingCall, PendingCalls } from "./pending.ts";
import { type BuiltRequest, buildRequest } from "./request.ts";
import { defaultSleep, type WaitBudget, withRetry } from "./retry.ts";

export interface CallRequest {
  /** Project code: selects the project token and fills the pcode header. */
  pcode?: number;
  params?: RequestParams;
  signal?: AbortSignal;
  /** Called as each attempt is sent (retries and refused token probes too), also when the call fails. */
  onAttempt?: () => void;
  /** Ends a backoff or Retry-After wait at once (SIGTERM/SIGINT), without cutting a request in flight. */
  stopWaits?: AbortSignal;
  /** The waits of the window this call belongs to, shared by its calls (api/retry.ts WINDOW_WAIT_MAX_MS). */
  waits?: WaitBudget;
}

export interface ApiResponse {
  /** Parsed JSON (bigint-safe) for `json` operations, `[]` for an empty body; trimmed text for `text` ones. */
  body: unknown;
  status: number;
  /** Attempts made, 1 + retries (refused token probes included). */
  attempts: number;
  bytes: number;
  /** Wall time of the whole call, retries and waits included. */
  ms: number;
  /** Send to answer of the attempt that answered: no wait for the rate governor, no retry, no backoff. */
  sendMs: number;
  /** Path + query, never a credential. */
  url: string;
  /** Which token the server accepted. */
  token: TokenKind;
}

export interface ApiStats {
  requests: number;
  retries: number;
  rateLimited: number;
  /** Requests the server refused the token of (401/403 or a token-error body). */
  refused: number;
}

export interface ApiClient {
  call(op: OperationDef, req: CallRequest): Promise<ApiResponse>;
  /** Server clock minus ours (ms), from the answers so far; null before any answer carried a clock. */
  serverClockOffsetMs(): number | null;
  /**
   * Asks the server for its clock (a GET of the base URL, no credential) when no answer told it
   * yet; gives up at api.timeoutMs, or at once when `signal` is aborted.
   */
  probeClock(signal?: AbortSignal): Promise<number | null>;
  /** Calls (and the clock probe) under way, for progress to name the slow ones. */
  pending(): readonly PendingCall[];
  /** Aborted, with a CircuitOpenError, once the server is found unreachable (api/breaker.ts). */
  readonly unreachable: AbortSignal;
  /** Tries an unreachable server again (a worker's next job): the breakers start closed. */
  reconnect(): void;
  close(): Promise<void>;
  readonly stats: Readonly<ApiStats>;
}

export interface ApiClientDeps {
  /** Our clock, against which the server's is measured (the entry point's; tests pass a fake one). */
  now: () => number;
  logger?: Logger;
  /** Backoff waits (tests record them); rejects with the signal's reason when it is aborted. The governor keeps real time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Counts every attempt and retry for Prometheus (src/metrics); none by default. */
  metrics?: Pick<MetricsObserver, "attempt" | "retry">;
  /** Failed connections in a row that stop the client (api/breaker.ts); Infinity: never. */
  breakerThreshold?: number;
}

/** Shared state of one client: what a single governed attempt needs. */
interface ClientState {
  readonly api: Config["api"];
  readonly log: Logger | undefined;
  readonly secrets: ReturnType<typeof configuredSecrets>;
  readonly governor: RateGovernor;
  readonly stats: ApiStats;
  readonly clock: ServerClock;
  readonly dispatcherFor: (origin: string) => Dispatcher;
  readonly metrics: Pick<MetricsObserver, "attempt" | "retry">;
  breakers: CircuitBreakers;
}

/** One client per run: one keep-alive pool per origin (or the proxy agent), one governor shared by all its calls. */
export function createApiClient(api: Config["api"], deps: ApiClientDeps): ApiClient {
  const dispatchers = new Map<string, Dispatcher>();
  // HTTPS_PROXY / HTTP_PROXY / NO_PROXY (read by config.ts): undici's own proxy agent.
  const proxy = api.proxy ? new EnvHttpProxyAgent({ ...api.proxy, ...poolOptions(api) }) : null;
  const state: ClientState = {
    api,
    log: deps.logger,
    secrets: configuredSecrets(api),
    governor: new RateGovernor({ concurrency: api.concurrency, requestsPerSecond: api.requestsPerSecond }),
    stats: { requests: 0, retries: 0, rateLimited: 0, refused: 0 },
    clock: new ServerClock(deps.now),
    metrics: deps.metrics ?? NO_METRICS,
    breakers: new CircuitBreakers(deps.breakerThreshold ?? breakerThreshold(api.retries)),
    dispatcherFor: (origin) => {
      if (proxy) return proxy;
      let pool = dispatchers.get(origin);
      if (!pool) {
        pool = new Pool(origin, poolOptions(api));
        dispatchers.set(origin, pool);
      }
      return pool;
    },
  };
  const negotiation = new TokenNegotiation();
  const paths = new Map<string, number>();
  const announced = new Set<string>();
  const callDeps = { sleep: deps.sleep ?? defaultSleep, random: deps.random ?? Math.random };

  const pending = new PendingCalls();
  const call = async (op: OperationDef, req: CallRequest): Promise<ApiResponse> => {
    const started = performance.now();
    const request = buildRequest(op, req.params ?? {}, api);
    // Before anything is sent: no usable token is an AuthError here.
    const candidates = tokenCandidates(op, req.pcode, api, request.path);
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
        const result = await sendWithPaths(state, op, req, choice.kind, paths, callDeps, (n) => {
          attempts += n;
        });
        if (negotiation.accepted(key, choice.kind) && candidates.length > 1)
          announce(state, op, req.pcode, choice.kind, announced, negotiation.refusedKinds(key));
        const ms = Math.round(performance.now() - started);
        const { body, status, bytes, url, sendMs } = result;
        return { body, status, attempts, bytes, ms, sendMs, url, token: choice.kind };
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

  return {
    call: (op, req) => pending.track(describeCall(op.id, req.pcode, req.params), () => call(op, req)),
    stats: state.stats,
    pending: () => pending.list(),
    get unreachable() {
      return state.breakers.opened;
    },
    reconnect: () => {
      if (state.breakers.opened.aborted) state.breakers = new CircuitBreakers(deps.breakerThreshold ?? breakerThreshold(api.retries));
    },
    serverClockOffsetMs: () => state.clock.offsetMs(),
    probeClock: async (signal) => {
      if (state.clock.offsetMs() !== null) return state.clock.offsetMs();
      const base = new URL(api.baseUrl);
      const deadline = AbortSignal.timeout(api.timeoutMs);
      const both = signal ? AbortSignal.any([deadline, signal]) : deadline;
      const probe = () => probeServerClock(state.dispatcherFor(base.origin), base, both, state.clock).catch(() => {});
      await pending.track("the server-clock probe (GET of the base URL)", probe);
      return state.clock.offsetMs();
    },
    close: async () => {
      await Promise.all([...dispatchers.values(), ...(proxy ? [proxy] : [])].map((d) => d.close()));
      dispatchers.clear();
    },
  };
}

function poolOptions(api: Config["api"]) {
  return { connections: api.concurrency, headersTimeout: api.timeoutMs, bodyTimeout: api.timeoutMs };
}

/**
 * Sends with retries; an operation with other documented paths (groups: v2 and v1) that answers
 * 404 is tried at the next one, and the path that answered is remembered. A configured override wins.
 */
async function sendWithPaths(
  s: ClientState,
  op: OperationDef,
  req: CallRequest,
  kind: TokenKind,
  paths: Map<string, number>,
  d: { sleep: (ms: number, signal?: AbortSignal) => Promise<void>; random: () => number },
  onAttempts: (n: number) => void,
): Promise<TimedAttempt & { url: string }> {
  const templates = op.altPaths && !s.api.overrides[op.id]?.path ? [op.path, ...op.altPaths] : [op.path];
  for (let i = paths.get(op.id) ?? 0; ; i++) {
    const variant = i === 0 ? op : { ...op, path: templates[i]! };
    const request = buildRequest(variant, req.params ?? {}, s.api);
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
