// The connections stream locks live on (withAdvisoryLock.ts), chosen by connect.ts for its
// database and looked up by the pool: nothing outside db/ sees them.
import type postgres from "postgres";

export interface LockSession {
  readonly sql: postgres.Sql;
  /**
   * The lock is held by the session every write runs in (the embedded database's one session,
   * which lives as long as the database): it cannot be lost while a write runs, so a write need
   * not confirm it (on PGlite the check costs ~6 ms per window transaction).
   */
  readonly sharedWithWrites: boolean;
  /** Gives the session back; `healthy` false: its connection was lost, and the session is ended, not reused. */
  release(healthy: boolean): void;
}

const factories = new WeakMap<postgres.Sql, () => LockSession>();

/** Registers how to get a lock session for the writes of pool `sql` (connect.ts). */
export function provideLockSessions(sql: postgres.Sql, factory: () => LockSession): void {
  factories.set(sql, factory);
}

/** A lock session for the writes of pool `sql`; release it when the lock is given up. */
export function lockSessionFor(sql: postgres.Sql): LockSession {
  const factory = factories.get(sql);
  if (!factory) throw new Error("no lock sessions for this pool: open it with openDatabase");
  return factory();
}
