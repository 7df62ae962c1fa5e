// The Open API client: build -> authenticate -> govern -> send, retried in one layer.
import { Pool } from "undici";
import type { OperationDef, RequestParams } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../util/logger.ts";
import { authHeaders, configuredSecrets } from "./auth.ts";
import { ApiError, HttpStatusError, RateLimitedError } from "./errors.ts";
import { RateGovernor } from "./governor.ts";
import { type BuiltRequest, buildRequest } from "./request.ts";
import { withRetry } from "./retry.ts";
import { type AttemptResult, sendOnce } from "./send.ts";

export interface CallRequest {
  /** Project code: selects the project token and fills the pcode header. */
  pcode?: number;
  params?: RequestParams;
  signal?: AbortSignal;
}

export interface ApiResponse {
  /** Parsed JSON (bigint-safe) for `json` operations, `[]` for an empty body; trimmed text for `text` ones. */
  body: unknown;
  status: number;
  /** Attempts made, 1 + retries. */
  attempts: number;
  bytes: number;
  /** Wall time of the whole call, retries and waits included. */
  ms: number;
  /** Path + query, never a credential. */
  url: string;
}

export interface ApiStats {
  requests: number;
  retries: number;
  rateLimited: number;
}

export interface ApiClient {
  call(op: OperationDef, req: CallRequest): Promise<ApiResponse>;
  close(): Promise<void>;
  readonly stats: Readonly<ApiStats>;
}

export interface ApiClientDeps {
  logger?: Logger;
  /** Backoff waits (tests record them). The governor keeps real time. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). */
  random?: () => number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Shared state of one client: what a single governed attempt needs. */
interface ClientState {
  readonly api: Config["api"];
  readonly log: Logger | undefined;
  readonly secrets: ReturnType<typeof configuredSecrets>;
  readonly governor: RateGovernor;
  readonly stats: ApiStats;
}

/** One client per run: one keep-alive pool per origin, one governor shared by all its calls. */
export function createApiClient(api: Config["api"], deps: ApiClientDeps = {}): ApiClient {
  const state: ClientState = {
    api,
    log: deps.logger,
    secrets: configuredSecrets(api),
    governor: new RateGovernor({ concurrency: api.concurrency, requestsPerSecond: api.requestsPerSecond }),
    stats: { requests: 0, retries: 0, rateLimited: 0 },
  };
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string): Pool => {
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: api.concurrency, headersTimeout: api.timeoutMs, bodyTimeout: api.timeoutMs });
      pools.set(origin, pool);
    }
    return pool;
  };

  const call = async (op: OperationDef, req: CallRequest): Promise<ApiResponse> => {
    const started = performance.now();
    const request = buildRequest(op, req.params ?? {}, api);
    // Before anything is sent: no usable token is an AuthError here.
    const headers = { ...request.headers, ...authHeaders(op, req.pcode, api, request.path) };
    const c: Call = { op, req, request, headers, pool: poolFor(request.origin) };
    let attempts = 0;
    const result = await withRetry(
      (n) => {
        attempts = n;
        return governedAttempt(state, c, n);
      },
      {
        retries: api.retries,
        sleep: deps.sleep ?? realSleep,
        random: deps.random ?? Math.random,
        signal: req.signal,
        onRetry: ({ error, attempt, delayMs }) => {
          state.stats.retries++;
          const fields = { op: op.id, pcode: req.pcode, path: request.path, attempt, delayMs, error: error.name, reason: error.message };
          state.log?.warn(fields, "api request will be retried");
        },
      },
    );
    const ms = Math.round(performance.now() - started);
    return { body: result.body, status: result.status, attempts, bytes: result.bytes, ms, url: request.path };
  };

  return {
    call,
    stats: state.stats,
    close: async () => {
      await Promise.all([...pools.values()].map((p) => p.close()));
      pools.clear();
    },
  };
}

interface Call {
  readonly op: OperationDef;
  readonly req: CallRequest;
  readonly request: BuiltRequest;
  readonly headers: Readonly<Record<string, string>>;
  readonly pool: Pool;
}

/** One attempt through the governor: counted, debug-logged (never with headers), outcome fed back. */
async function governedAttempt(s: ClientState, c: Call, n: number): Promise<AttemptResult> {
  const permit = await s.governor.acquire();
  s.stats.requests++;
  const t0 = performance.now();
  const fields = { op: c.op.id, pcode: c.req.pcode, path: c.request.path, attempt: n };
  try {
    const result = await sendOnce(c.pool, {
      op: c.op,
      request: c.request,
      headers: c.headers,
      ctx: { opId: c.op.id, pcode: c.req.pcode, path: c.request.path, attempt: n },
      secrets: s.secrets,
      tokenHeader: s.api.tokenHeader,
      timeoutMs: s.api.timeoutMs,
      maxResponseBytes: s.api.maxResponseBytes,
      signal: c.req.signal,
    });
    permit.release("ok");
    s.log?.debug({ ...fields, status: result.status, ms: Math.round(performance.now() - t0), bytes: result.bytes }, "api request");
    return result;
  } catch (e) {
    const limited = e instanceof RateLimitedError;
    if (limited) s.stats.rateLimited++;
    permit.release(limited ? "rate-limited" : "failed");
    const status = e instanceof HttpStatusError ? e.status : undefined;
    const error = e instanceof ApiError ? e.name : "Aborted";
    s.log?.debug({ ...fields, status, ms: Math.round(performance.now() - t0), error }, "api request failed");
    throw e;
  }
}
