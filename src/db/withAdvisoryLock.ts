// Per-(stream, pcode) lock so overlapping runs (cron overlap, two workers) never write the same
// stream at once (DESIGN.md section 2).
import type postgres from "postgres";
import { isTransientDbError } from "./transient.ts";

export type LockResult<T> = { readonly acquired: true; readonly value: T } | { readonly acquired: false };

/** The lock of a running `fn`: a session lock dies with its connection, so writers re-check it. */
export interface LockHandle {
  /**
   * Whether this process holds the lock now; when its connection died (database restart) it is
   * taken again on the new one. false: another process took it meanwhile: do not write.
   */
  ensure(): Promise<boolean>;
}

/** Whether the lock is held by this session (pg_locks shows advisory keys as oids). */
const HELD_SQL = `SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
  AND l.pid = pg_backend_pid() AND l.classid = hashtext(current_schema() || '/' || $1::text)::oid AND l.objid = hashtext($2::text)::oid) AS ok`;

// Keys held by this process, per pool: a Postgres session may take the same advisory lock twice,
// and the embedded database is one session for everybody.
const heldByPool = new WeakMap<postgres.Sql, Set<string>>();

/** The two-int advisory lock key: schema-qualified stream name and pcode, hashed by Postgres. */
export const LOCK_KEY_SQL = "hashtext(current_schema() || '/' || $1::text), hashtext($2::text)";

/**
 * Runs `fn` while holding a session advisory lock on (schema, stream, pcode); returns
 * `{ acquired: false }` at once when another process (or another task of this one) holds it.
 * The lock lives on a reserved connection, so the pool needs one connection more than the
 * number of streams run at once; a single-connection pool (embedded) locks on that connection.
 */
export async function withAdvisoryLock<T>(
  sql: postgres.Sql,
  stream: string,
  pcode: number,
  fn: (lock: LockHandle) => Promise<T>,
): Promise<LockResult<T>> {
  const key = `${stream}\u0000${pcode}`;
  const held = heldByPool.get(sql) ?? new Set<string>();
  heldByPool.set(sql, held);
  if (held.has(key)) return { acquired: false };
  held.add(key);
  const reserved = sql.options.max > 1;
  let conn = reserved ? await sql.reserve().catch((e: unknown) => (held.delete(key), Promise.reject(e))) : null;
  const on = () => conn ?? sql;
  const args = [stream, String(pcode)];
  const tryLock = async () =>
    (await on().unsafe<{ ok: boolean }[]>(`select pg_try_advisory_lock(${LOCK_KEY_SQL}) as ok`, args))[0]?.ok === true;
  try {
    if (!(await tryLock())) return { acquired: false };
    const lock: LockHandle = {
      ensure: async () => {
        try {
          const [row] = await on().unsafe<{ ok: boolean }[]>(HELD_SQL, args);
          if (row?.ok) return true;
        } catch (e) {
          // The connection that held the lock is gone, and the lock with it: take a new one.
          if (!reserved || !isTransientDbError(e)) throw e;
          conn?.release();
          conn = null;
          conn = await sql.reserve();
        }
        return tryLock();
      },
    };
    try {
      return { acquired: true, value: await fn(lock) };
    } finally {
      // A lost connection released the lock already; nothing to undo then.
      await on()
        .unsafe(`select pg_advisory_unlock(${LOCK_KEY_SQL})`, args)
        .catch(() => {});
    }
  } finally {
    conn?.release();
    held.delete(key);
  }
}
