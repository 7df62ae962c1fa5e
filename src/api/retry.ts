// The one retry layer: p-retry around each HTTP request, full-jitter backoff,
// Retry-After honoured. Everything else in the code base lets errors through.
import pRetry from "p-retry";
import { ApiError, GaveUpWaitingError, HttpStatusError } from "./errors.ts";

export const BACKOFF_BASE_MS = 250;
export const BACKOFF_MAX_MS = 30_000;
/** A Retry-After longer than this fails the request at once (no wait) instead of stalling the run. */
export const RETRY_AFTER_MAX_MS = 5 * 60_000;
/** All the waits (backoff and Retry-After) of one window together, across its requests. */
export const WINDOW_WAIT_MAX_MS = 5 * 60_000;

/** What a window has waited so far; shared by the calls of one window (see CallRequest.waits). */
export interface WaitBudget {
  waitedMs: number;
}

export interface RetryOptions {
  /** Attempts after the first (api.retries). */
  readonly retries: number;
  /** Rejects with the signal's reason when it is aborted during the wait. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** [0, 1): the jitter source. */
  readonly random: () => number;
  /** Aborts the call (no further attempt, no wait). */
  readonly signal?: AbortSignal | undefined;
  /** Ends a wait at once without touching an attempt in flight (SIGTERM: a waiting window is abandoned). */
  readonly stopWaits?: AbortSignal | readonly AbortSignal[] | undefined;
  /** Waits so far of the window this call belongs to (default: this call alone). */
  readonly waits?: WaitBudget | undefined;
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

/** The real wait: a timer that rejects with the signal's reason when the signal is aborted. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Runs `attempt(n)` (n = 1, 2, ...) until it succeeds, a non-retryable error occurs or retries run out. */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const waits = opts.waits ?? { waitedMs: 0 };
  // Combined only when a wait happens: most calls never wait, and every AbortSignal.any stays
  // registered with its long-lived sources (the run's stop, the breaker).
  const waitSources = [opts.signal, ...[opts.stopWaits ?? []].flat()].filter((x): x is AbortSignal => x !== undefined);
  let waitSignal: AbortSignal | undefined;
  const waitOn = () => {
    waitSignal ??= waitSources.length > 1 ? AbortSignal.any(waitSources) : waitSources[0];
    return waitSignal;
  };
  // Set when a wait was refused: the call then fails saying so, not with the error it waited on.
  let refused: GaveUpWaitingError | null = null;
  try {
    return await pRetry(attempt, {
      retries: opts.retries,
      // p-retry's own timer is disabled: the wait happens in shouldRetry with the injected sleep,
      // so that tests can record delays and Retry-After can lengthen it.
      minTimeout: 0,
      factor: 1,
      signal: opts.signal,
      shouldRetry: async ({ error, retriesConsumed, attemptNumber }) => {
        if (opts.signal?.aborted || !isRetryable(error)) return false;
        const retryAfterMs = error instanceof HttpStatusError ? error.retryAfterMs : undefined;
        const delayMs = backoffDelay(retriesConsumed, opts.random, retryAfterMs);
        refused = refusedWait(error, retryAfterMs, delayMs, waits.waitedMs);
        if (refused) return false;
        opts.onRetry?.({ error, attempt: attemptNumber, delayMs });
        waits.waitedMs += delayMs;
        await opts.sleep(delayMs, waitOn());
        return true;
      },
    });
  } catch (e) {
    throw refused ?? e;
  }
}

/** Why a wait is not made: a Retry-After beyond the cap, or the window's waits used up. */
function refusedWait(error: ApiError, retryAfterMs: number | undefined, delayMs: number, waitedMs: number): GaveUpWaitingError | null {
  if (retryAfterMs !== undefined && retryAfterMs > RETRY_AFTER_MAX_MS)
    return new GaveUpWaitingError(
      `the server asked to wait (retry-after of ${formatDuration(retryAfterMs)}), more than the ${formatDuration(RETRY_AFTER_MAX_MS)} a request may wait: no retry was made`,
      error,
    );
  if (waitedMs + delayMs > WINDOW_WAIT_MAX_MS)
    return new GaveUpWaitingError(
      `gave up after waiting ${formatDuration(waitedMs)} for this window (at most ${formatDuration(WINDOW_WAIT_MAX_MS)} per window); the next wait would have been ${formatDuration(delayMs)}`,
      error,
    );
  return null;
}

/** "1 day", "2.5 h", "5 min", "90 s", "250 ms". */
export function formatDuration(ms: number): string {
  const round = (n: number) => String(Math.round(n * 10) / 10);
  if (ms >= 86_400_000) return `${round(ms / 86_400_000)} day${ms === 86_400_000 ? "" : "s"}`;
  if (ms >= 3_600_000) return `${round(ms / 3_600_000)} h`;
  if (ms >= 120_000) return `${round(ms / 60_000)} min`;
  if (ms >= 1_000) return `${round(ms / 1_000)} s`;
  return `${Math.round(ms)} ms`;
}
