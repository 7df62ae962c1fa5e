// Per-(stream, pcode) lock so overlapping runs (cron overlap, two workers) never write the same
// stream at once (docs/design.md "Ledger and watermarks"), and never write without it, even across a database restart.
//
// The lock is a session advisory lock on a connection of its own (lockSession.ts). Writes
// run on the shared pool, each in a transaction that first confirms the lock (`confirm`): it takes
// the stream's write key in shared mode and checks that the lock's backend still holds the lock.
// A process that takes the lock over (after the old holder's connection died) waits once for the
// write key in exclusive mode (the fence), so a write confirmed by the old holder has committed or
// rolled back before the new holder writes anything.
import type postgres from "postgres";
import type { Database } from "./connect.ts";
import { LOCK_KEYS, sessionLockHeld } from "./lockKeys.ts";
import { type LockSession, lockSessionFor } from "./lockSession.ts";
import { isTransientDbError } from "./transient.ts";

export type LockResult<T> = { readonly acquired: true; readonly value: T } | { readonly acquired: false };

/** The lock of a running `fn`: a session lock dies with its connection, so writers confirm it. */
export interface LockHandle {
  /**
   * Whether this process holds the lock now; when its connection died (database restart) it is
   * taken again on a new one. false: another process took it meanwhile: do not write.
   */
  ensure(): Promise<boolean>;
  /**
   * Inside a write transaction: whether the lock is still held (false: call `ensure` again). Holds
   * the write key (shared) until the transaction ends, so a new holder's fence waits for it.
   */
  confirm(tx: postgres.TransactionSql): Promise<boolean>;
}

/** Whether backend `pid` holds the lock. */
const heldBy = (pid: string) => sessionLockHeld("$1::text", "$2::text", pid);

// Keys held by this process, per pool: a Postgres session may take the same advisory lock twice,
// and the embedded database is one session for everybody.
const heldByPool = new WeakMap<postgres.Sql, Set<string>>();

/**
 * How the lock is asked for again while the database is away (the engine's: its database step's
 * retries, db-step.ts retryTake). A session from the free list may have lost its connection while
 * idle: the error arrives with the first query, and the client reconnects on the next one.
 */
export type TakeRetry = (take: () => Promise<boolean>) => Promise<boolean>;

/**
 * Runs `fn` while holding a session advisory lock on (schema, stream, pcode); returns
 * `{ acquired: false }` at once when another process (or another task of this one) holds it.
 * `retry` asks for the lock again while the database is away (a caller's retry budget).
 */
export async function withAdvisoryLock<T>(
  database: Pick<Database, "sql">,
  stream: string,
  pcode: number,
  fn: (lock: LockHandle) => Promise<T>,
  retry: TakeRetry,
): Promise<LockResult<T>> {
  const key = `${stream}\u0000${pcode}`;
  const held = heldByPool.get(database.sql) ?? new Set<string>();
  heldByPool.set(database.sql, held);
  if (held.has(key)) return { acquired: false };
  held.add(key);
  const session = lockSessionFor(database.sql);
  const lock = new SessionLock(session, [stream, String(pcode)]);
  let healthy = true;
  try {
    if (!(await retry(() => lock.take()))) return { acquired: false };
    try {
      return { acquired: true, value: await fn(lock) };
    } finally {
      healthy = await lock.release();
    }
  } finally {
    session.release(healthy);
    held.delete(key);
  }
}

/** The lock on its session connection, and the checks its writers make. */
class SessionLock implements LockHandle {
  /** Backend that holds the lock; null while not held. */
  #holder: number | null = null;

  constructor(
    private readonly session: LockSession,
    private readonly args: readonly string[],
  ) {}

  async take(): Promise<boolean> {
    const [row] = await this.session.sql.unsafe<{ ok: boolean; pid: number }[]>(
      `select pg_try_advisory_lock(${LOCK_KEYS.session}) as ok, pg_backend_pid() as pid`,
      [...this.args],
    );
    if (!row?.ok) return false;
    // The fence: writes confirmed under an earlier holder end before this holder writes.
    await this.session.sql.unsafe(`select pg_advisory_xact_lock(${LOCK_KEYS.write})`, [...this.args]);
    this.#holder = row.pid;
    return true;
  }

  async ensure(): Promise<boolean> {
    try {
      const [row] = await this.session.sql.unsafe<{ ok: boolean }[]>(`select ${heldBy("$3::int")} as ok`, [
        ...this.args,
        this.#holder ?? 0,
      ]);
      if (row?.ok) return true;
    } catch (e) {
      // The connection that held the lock is gone, and the lock with it: the client
      // reconnects on the next query, where the lock is taken again.
      if (!isTransientDbError(e)) throw e;
    }
    this.#holder = null;
    return this.take();
  }

  async confirm(tx: postgres.TransactionSql): Promise<boolean> {
    if (this.#holder === null) return false;
    if (this.session.sharedWithWrites) return true;
    // First the write key, then the check (a takeover after the check waits for this write):
    // the check reads the holder from the row that took the key, so it cannot run before it.
    const [row] = await tx
      .unsafe<{ ok: boolean }[]>(
        `select ${heldBy("w.holder")} as ok
           from (select $3::int as holder, pg_advisory_xact_lock_shared(${LOCK_KEYS.write}) as taken) as w`,
        [...this.args, this.#holder],
        // Prepared: an unnamed statement with parameters costs postgres.js a round trip to describe
        // it first, which held the window's pipelined statements back until it came.
        { prepare: true },
      )
      .execute(); // sent now: before the write's statements (exec.ts PIPELINING)
    return row?.ok === true;
  }

  /**
   * Gives the lock up; false when its connection turned out lost (the lock went with it). Such a
   * client would hand the loss to its next query, the next stream's lock: it is not reused.
   */
  async release(): Promise<boolean> {
    if (this.#holder === null) return true;
    return this.session.sql.unsafe(`select pg_advisory_unlock(${LOCK_KEYS.session})`, [...this.args]).then(
      () => true,
      () => false,
    );
  }
}
