// Per-(stream, pcode) lock so overlapping runs (cron overlap, two workers) never write the same
// stream at once (DESIGN.md section 2).
import type postgres from "postgres";

export type LockResult<T> = { readonly acquired: true; readonly value: T } | { readonly acquired: false };

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
export async function withAdvisoryLock<T>(sql: postgres.Sql, stream: string, pcode: number, fn: () => Promise<T>): Promise<LockResult<T>> {
  const key = `${stream}\u0000${pcode}`;
  const held = heldByPool.get(sql) ?? new Set<string>();
  heldByPool.set(sql, held);
  if (held.has(key)) return { acquired: false };
  held.add(key);
  try {
    const conn = sql.options.max > 1 ? await sql.reserve() : null;
    const on = conn ?? sql;
    try {
      const [row] = await on.unsafe<{ ok: boolean }[]>(`select pg_try_advisory_lock(${LOCK_KEY_SQL}) as ok`, [stream, String(pcode)]);
      if (!row?.ok) return { acquired: false };
      try {
        return { acquired: true, value: await fn() };
      } finally {
        // A lost connection released the lock already; nothing to undo then.
        await on.unsafe(`select pg_advisory_unlock(${LOCK_KEY_SQL})`, [stream, String(pcode)]).catch(() => {});
      }
    } finally {
      conn?.release();
    }
  } finally {
    held.delete(key);
  }
}
