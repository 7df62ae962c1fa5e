// The Open API client: build -> authenticate -> govern -> send, retried in one layer.
import { Pool } from "undici";
import type { OperationDef, RequestParams } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../util/logger.ts";
import { authHeaders, configuredSecrets } from "./auth.ts";
import { ApiError, HttpStatusError, RateLimitedError } from "./errors.ts";
import { RateGovernor } from "./governor.ts";
import { buildRequest } from "./request.ts";
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

/** One client per run: one keep-alive pool per origin, one governor shared by all its calls. */
export function createApiClient(api: Config["api"], deps: ApiClientDeps = {}): ApiClient {
  const sleep = deps.sleep ?? realSleep;
  const random = deps.random ?? Math.random;
  const log = deps.logger;
  const secrets = configuredSecrets(api);
  const pools = new Map<string, Pool>();
  const governor = new RateGovernor({ concurrency: api.concurrency, requestsPerSecond: api.requestsPerSecond });
  const stats: ApiStats = { requests: 0, retries: 0, rateLimited: 0 };

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
    const headers = { ...request.headers, ...authHeaders(op, req.pcode, api, request.path) };
    const pool = poolFor(request.origin);
    const base = { op: op.id, pcode: req.pcode, path: request.path };
    let attempts = 0;

    const attempt = async (n: number): Promise<AttemptResult> => {
      attempts = n;
      const permit = await governor.acquire();
      stats.requests++;
      const t0 = performance.now();
      try {
        const ctx = { opId: op.id, pcode: req.pcode, path: request.path, attempt: n };
        const result = await sendOnce(pool, {
          op,
          request,
          headers,
          ctx,
          secrets,
          tokenHeader: api.tokenHeader,
          timeoutMs: api.timeoutMs,
          maxResponseBytes: api.maxResponseBytes,
          signal: req.signal,
        });
        permit.release("ok");
        log?.debug(
          { ...base, attempt: n, status: result.status, ms: Math.round(performance.now() - t0), bytes: result.bytes },
          "api request",
        );
        return result;
      } catch (e) {
        if (e instanceof RateLimitedError) stats.rateLimited++;
        permit.release(e instanceof RateLimitedError ? "rate-limited" : "failed");
        const status = e instanceof HttpStatusError ? e.status : undefined;
        const error = e instanceof ApiError ? e.name : "Aborted";
        log?.debug({ ...base, attempt: n, status, ms: Math.round(performance.now() - t0), error }, "api request failed");
        throw e;
      }
    };

    const result = await withRetry(attempt, {
      retries: api.retries,
      sleep,
      random,
      signal: req.signal,
      onRetry: ({ error, attempt: n, delayMs }) => {
        stats.retries++;
        log?.warn({ ...base, attempt: n, delayMs, error: error.name, reason: error.message }, "api request will be retried");
      },
    });
    const ms = Math.round(performance.now() - started);
    return { body: result.body, status: result.status, attempts, bytes: result.bytes, ms, url: request.path };
  };

  return {
    call,
    stats,
    close: async () => {
      await Promise.all([...pools.values()].map((p) => p.close()));
      pools.clear();
    },
  };
}
