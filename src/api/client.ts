// The Open API client: build -> authenticate (negotiating the token where the spec leaves it open)
// -> govern -> send, retried in one layer (api/negotiated-call.ts). The client holds what its calls
// share: the pools, the governor, the breakers, the server's clock and the counters.
import { type Dispatcher, EnvHttpProxyAgent, Pool } from "undici";
import type { OperationDef, RequestParams, TokenKind } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { type MetricsObserver, NO_METRICS } from "../metrics/observer.ts";
import { NO_TRACER, type Tracer, type TraceSpan } from "../tracing/tracer.ts";
import type { Logger } from "../util/logger.ts";
import { configuredSecrets } from "./auth.ts";
import { breakerThreshold, CircuitBreakers } from "./breaker.ts";
import { probeServerClock, ServerClock } from "./clock.ts";
import { RateGovernor } from "./governor.ts";
import { type ClientState, negotiatingCaller } from "./negotiated-call.ts";
import type { Page } from "./page.ts";
import { describeCall, type PendingCall, PendingCalls } from "./pending.ts";
import { defaultSleep, type WaitBudget } from "./retry.ts";
import { MemoryBudget } from "./spool.ts";

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
  /** The span (a window's, a capture's) whose children the call's HTTP requests are. */
  span?: TraceSpan;
}

export interface ApiResponse {
  /**
   * The answer: its envelope parsed (bigint-safe; the trimmed text for `text` operations), its
   * records as text. The caller reads the records (schemas/parse-response.ts) and disposes of it.
   */
  body: Page;
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
  /** A span per HTTP request sent (src/tracing); none by default. */
  tracer?: Tracer;
}

/** One keep-alive pool per origin, or the proxy agent for all; `close` ends them. */
function dispatchersOf(api: Config["api"]) {
  const pools = new Map<string, Dispatcher>();
  // HTTPS_PROXY / HTTP_PROXY / NO_PROXY (read by config.ts): undici's own proxy agent.
  const proxy = api.proxy ? new EnvHttpProxyAgent({ ...api.proxy, ...poolOptions(api) }) : null;
  return {
    dispatcherFor: (origin: string): Dispatcher => {
      if (proxy) return proxy;
      let pool = pools.get(origin);
      if (!pool) {
        pool = new Pool(origin, poolOptions(api));
        pools.set(origin, pool);
      }
      return pool;
    },
    close: async () => {
      await Promise.all([...pools.values(), ...(proxy ? [proxy] : [])].map((d) => d.close()));
      pools.clear();
    },
  };
}

/** One client per run: one keep-alive pool per origin (or the proxy agent), one governor shared by all its calls. */
export function createApiClient(api: Config["api"], deps: ApiClientDeps): ApiClient {
  const { dispatcherFor, close } = dispatchersOf(api);
  const breakers = () => new CircuitBreakers(deps.breakerThreshold ?? breakerThreshold(api.retries));
  const state: ClientState = {
    api,
    log: deps.logger,
    secrets: configuredSecrets(api),
    governor: new RateGovernor({ concurrency: api.concurrency, requestsPerSecond: api.requestsPerSecond }),
    stats: { requests: 0, retries: 0, rateLimited: 0, refused: 0 },
    clock: new ServerClock(deps.now),
    metrics: deps.metrics ?? NO_METRICS,
    tracer: deps.tracer ?? NO_TRACER,
    breakers: breakers(),
    budget: new MemoryBudget(api.memoryBudget),
    dispatcherFor,
  };
  const call = negotiatingCaller(state, { sleep: deps.sleep ?? defaultSleep, random: deps.random ?? Math.random });
  const pending = new PendingCalls();
  return {
    call: (op, req) => pending.track(describeCall(op.id, req.pcode, req.params), () => call(op, req)),
    stats: state.stats,
    pending: () => pending.list(),
    get unreachable() {
      return state.breakers.opened;
    },
    reconnect: () => {
      if (state.breakers.opened.aborted) state.breakers = breakers();
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
    close,
  };
}

function poolOptions(api: Config["api"]) {
  return { connections: api.concurrency, headersTimeout: api.timeoutMs, bodyTimeout: api.timeoutMs };
}
