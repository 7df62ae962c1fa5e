// The one retry layer (STYLE.md rule 4): p-retry around each HTTP request, full-jitter backoff,
// Retry-After honoured. Everything else in the code base lets errors through.
import pRetry from "p-retry";
import { ApiError, HttpStatusError } from "./errors.ts";

export const BACKOFF_BASE_MS = 250;
export const BACKOFF_MAX_MS = 30_000;
/** A Retry-After longer than this fails the request instead of stalling the whole run. */
export const RETRY_AFTER_MAX_MS = 5 * 60_000;

export interface RetryOptions {
  /** Attempts after the first (api.retries). */
  readonly retries: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** [0, 1): the jitter source. */
  readonly random: () => number;
  readonly signal?: AbortSignal | undefined;
  /** Called before each wait; `attempt` is the attempt that failed (1-based). */
  readonly onRetry?: (info: { error: ApiError; attempt: number; delayMs: number }) => void;
}

/** 408, 429, 5xx, transport failures and non-JSON bodies; never auth, 4xx, error bodies, size limit. */
export function isRetryable(error: unknown): error is ApiError {
  return error instanceof ApiError && error.retryable;
}

/**
 * Full jitter (`random * min(max, base * 2^n)`) for retry number `n` (0-based), but never less
 * than the server's Retry-After.
 */
export function backoffDelay(retryIndex: number, random: () => number, retryAfterMs?: number): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** retryIndex);
  const jittered = Math.floor(random() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
}

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** Runs `attempt(n)` (n = 1, 2, ...) until it succeeds, a non-retryable error occurs or retries run out. */
export function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  return pRetry(attempt, {
    retries: opts.retries,
    // p-retry's own timer is disabled: the wait happens in shouldRetry with the injected sleep,
    // so that tests can record delays and Retry-After can lengthen it.
    minTimeout: 0,
    factor: 1,
    signal: opts.signal,
    shouldRetry: async ({ error, retriesConsumed, attemptNumber }) => {
      if (opts.signal?.aborted || !isRetryable(error)) return false;
      const retryAfterMs = error instanceof HttpStatusError ? error.retryAfterMs : undefined;
      if (retryAfterMs !== undefined && retryAfterMs > RETRY_AFTER_MAX_MS) return false;
      const delayMs = backoffDelay(retriesConsumed, opts.random, retryAfterMs);
      opts.onRetry?.({ error, attempt: attemptNumber, delayMs });
      await opts.sleep(delayMs);
      return true;
    },
  });
}
