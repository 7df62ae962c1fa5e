// The engine's database steps survive a database restart: each is retried while its error heals
// (db/driver/transient.ts), for up to APM_DB_RETRY, and a stream re-checks its advisory lock before it
// writes, since a session lock dies with its connection. Never a write without the lock.
// Errors are classified where they happen: only the database's own are "database unavailable";
// an aborted HTTP wait or a stop signal never is.
import type postgres from "postgres";
import { dbErrorCode, isTransientDbError } from "../db/driver/transient.ts";
import type { LockHandle, TakeRetry } from "../db/driver/withAdvisoryLock.ts";
import { withDbRetry } from "../db/driver/withDbRetry.ts";
import type { EngineDeps } from "./types.ts";

/** Another process took the stream's lock while this one's connection was gone. */
export class LockLostError extends Error {
  constructor(label: string) {
    super(`${label}: another run is writing this stream now; skipped (it will be caught up next run)`);
    this.name = "LockLostError";
  }
}

/** What a database step needs: the retry budget, where to say so, and the shutdown's hard stop. */
export type DbStepDeps = Pick<EngineDeps, "config" | "logger" | "hardStop">;

/**
 * Runs one database step with retries of the errors that heal; `what` names it in the log. After
 * the shutdown grace (hardStop) a failing step is no longer retried, but a step is never failed
 * for the stop itself: the run's own bookkeeping (marking it `cancelled`) must still be written.
 */
export function dbStep<T>(deps: DbStepDeps, what: string, step: () => Promise<T>): Promise<T> {
  return withDbRetry(
    async () => {
      try {
        return await step();
      } catch (e) {
        if (deps.hardStop?.aborted && isTransientDbError(e)) throw new DbStoppedError(what, e);
        throw e;
      }
    },
    {
      budgetMs: deps.config.sync.dbRetryMs,
      onRetry: (error, attempt) => {
        const code = dbErrorCode(error);
        // Only the database's own errors (SQLSTATEs, its lost connections) are "database unavailable".
        if (!isTransientDbError(error)) return;
        if (attempt === 1 || attempt % 10 === 0)
          deps.logger.warn(
            `database unavailable (${String(code)}) during ${what}; retrying for up to ${Math.round(deps.config.sync.dbRetryMs / 1000)} s (APM_DB_RETRY)`,
          );
      },
    },
  );
}

/** A lock asked for again (withAdvisoryLock's `retry`) while the database is away, as any step is. */
export function retryTake(deps: DbStepDeps, what: string): TakeRetry {
  return (take) => dbStep(deps, what, take);
}

/** The database failed during the shutdown: not retried any more. */
class DbStoppedError extends Error {
  constructor(what: string, cause: unknown) {
    super(`database unavailable during ${what}, and the shutdown grace is over: not retried`, { cause });
    this.name = "DbStoppedError";
  }
}

/** The lock's connection died (the lock with it): take it again, then try the write again. */
class LockMovedError extends Error {
  readonly code = "LOCK_MOVED";
}

/**
 * A write transaction under the stream's lock, confirmed inside the transaction (one statement,
 * sent with the write's first ones), so a write never commits without it. After a failed attempt (a lost connection, or a lock whose
 * connection died) the lock is checked, and re-taken, before the next one.
 */
export function lockedWrite<T>(
  deps: EngineDeps,
  lock: LockHandle | undefined,
  label: string,
  step: (tx: postgres.TransactionSql) => Promise<T>,
): Promise<T> {
  let retry = false;
  return dbStep(deps, `the write of ${label}`, async () => {
    if (lock && retry && !(await lock.ensure())) throw new LockLostError(label);
    retry = true;
    return deps.database.sql.begin(async (tx) => {
      if (!lock) return step(tx);
      // Pipelined: the confirmation and the write's statements leave together and run in order;
      // an unconfirmed write throws, and the transaction rolls back all of it.
      const [confirmed, written] = await Promise.allSettled([lock.confirm(tx), step(tx)]);
      if (confirmed.status === "rejected") throw confirmed.reason;
      if (!confirmed.value) throw new LockMovedError(`${label}: the lock's connection was lost`);
      if (written.status === "rejected") throw written.reason;
      return written.value;
    }) as Promise<T>;
  });
}
