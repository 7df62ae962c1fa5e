// The Open API client: build -> authenticate (negotiating the token where the spec leaves it open)
// -> govern -> send, retried in one layer (api/negotiated-call.ts). The client holds what its calls
// share: the pools, the governor, the breakers, the server's clock and the counters.
import { type Dispatcher, EnvHttpProxyAgent, Pool } from "undici";
import { configuredSecrets } from "../config/credentials.ts";
import type { Config } from "../config.ts";
import { NO_TRACER } from "../tracing/tracer.ts";
import { NO_METRICS } from "../util/metrics-observer.ts";
import { breakerThreshold, CircuitBreakers } from "./breaker.ts";
import { probeServerClock, ServerClock } from "./clock.ts";
import { RateGovernor } from "./governor.ts";
import { type ClientState, negotiatingCaller } from "./negotiated-call.ts";
import { describeCall, PendingCalls } from "./pending.ts";
import { defaultSleep } from "./retry.ts";
import { MemoryBudget } from "./spool.ts";
import type { ApiClient, ApiClientDeps } from "./types.ts";

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
