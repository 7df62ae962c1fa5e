// Runs a database step again while it fails with an error that heals (transient.ts), with capped
// exponential backoff, for at most `budgetMs` in all. Used around each window's transaction and
// the run's own bookkeeping, so that a database restart delays a run instead of failing it.
import pRetry, { AbortError } from "p-retry";
import { dbErrorCode, isTransientDbError } from "./transient.ts";

export interface DbRetryOptions {
  /** Total time the step may keep retrying (APM_DB_RETRY). */
  readonly budgetMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Told about each failed attempt that will be retried. */
  readonly onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * A step whose database stayed away for the whole budget: the last error is its cause, and its
 * code is the cause's (a lost connection is still one to whoever classifies it).
 */
export class DbRetriesSpentError extends Error {
  readonly code: unknown;
  constructor(cause: unknown, budgetMs: number) {
    const spent = budgetMs >= 1000 ? `${Math.round(budgetMs / 1000)} s` : `${budgetMs} ms`;
    super(`still unavailable after ${spent} of retries`, { cause });
    this.name = "DbRetriesSpentError";
    this.code = dbErrorCode(cause);
  }
}

export async function withDbRetry<T>(step: () => Promise<T>, opts: DbRetryOptions): Promise<T> {
  return retried(step, opts).catch((e: unknown) => Promise.reject(isTransientDbError(e) ? new DbRetriesSpentError(e, opts.budgetMs) : e));
}

function retried<T>(step: () => Promise<T>, opts: DbRetryOptions): Promise<T> {
  return pRetry(
    async () => {
      try {
        return await step();
      } catch (e) {
        if (!isTransientDbError(e)) throw new AbortError(e instanceof Error ? e : new Error(String(e)));
        throw e;
      }
    },
    {
      retries: Number.POSITIVE_INFINITY,
      minTimeout: 200,
      maxTimeout: 3_000,
      factor: 2,
      randomize: true,
      maxRetryTime: opts.budgetMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
      onFailedAttempt: ({ error, attemptNumber }) => opts.onRetry?.(error, attemptNumber),
    },
  );
}
