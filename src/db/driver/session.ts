// What each connection into the warehouse asks of its session, and how it asks: the few startup
// parameters every connection pooler passes on, then everything else in the connection's first
// statement (the driver patch's `prelude`), whose failure ends the connection. And the check that
// a server's connections keep their sessions (a pooler in transaction mode shares them).
import type postgres from "postgres";
import { quoteLiteral as literal } from "../sqlText.ts";

/**
 * Startup parameters: only those a connection pooler passes on. PgBouncer refuses a connection
 * that sends any other ("unsupported startup parameter: search_path", 08P01): its default list is
 * client_encoding, DateStyle, TimeZone, standard_conforming_strings and application_name. Times
 * come as ISO text, the only style the driver reads (under "SQL, DMY" it read 01/12/2026, the 1st
 * of December, as January 12).
 */
const STARTUP: Readonly<Record<string, string>> = { application_name: "apm-sync", DateStyle: "ISO" };

/**
 * The session's settings, asked for whatever a database's defaults for its other clients are:
 * - its schema (APM_DB_SCHEMA): every statement names its tables unqualified;
 * - read committed, which apm-sync's locks and fences are built on (under a default of
 *   serializable, concurrent windows failed with 40001 and were retried as "database
 *   unavailable"); a transaction that needs another level asks for it (transfer.ts);
 * - on a server, no idle_session_timeout: a lock's connection is idle by design while its stream
 *   runs, and a pool's connection the server ended while idle failed the write that took it at that
 *   instant (ECONNRESET); the pool closes the connections it leaves idle itself instead.
 */
function settings(schema: string, server: boolean): Readonly<Record<string, string>> {
  return {
    search_path: schema,
    default_transaction_isolation: "read committed",
    ...(server ? { idle_session_timeout: "0" } : {}),
  };
}

/**
 * Run by a server's pool's connections besides their settings, so that a backend keeps the memory
 * its statements free. A backend's malloc (glibc) gives the top of its heap back to the system once
 * more than 128 KiB of it is free, and a window's COPY of a few hundred rows allocates about 240 KiB
 * (its tuple slots and tuples) and frees it when it ends: every COPY faulted its memory in again,
 * about 60 page faults a COPY (measured). glibc raises that threshold, and the size it maps blocks
 * of on their own, to the size of the first such block freed: the 1 MiB value here is one, so the
 * backend keeps up to 2 MiB free. Measured (docs/benchmarks.md, twenty-second sitting): in `npm run
 * bench` the backends' page faults halved and their CPU a row fell 12% (median of three alternated
 * pairs); apart, a third. Nothing changes on a server without glibc's malloc.
 */
const KEEP_HEAP = `length(repeat(' ', ${1024 * 1024})) AS "kept"`;

export interface SessionOptions {
  /** A Postgres server (not the embedded database): no idle_session_timeout. */
  readonly server: boolean;
  /** A pool's connection, which runs the window's COPYs: keeps its backend's freed memory (KEEP_HEAP). */
  readonly keepHeap?: boolean;
}

/**
 * The driver options that make a connection's session: its startup parameters and its first
 * statement (`prelude`, the driver patch's option, not in its type declarations).
 */
export function sessionOptions(schema: string, { server, keepHeap = false }: SessionOptions): Record<string, unknown> {
  const sets = Object.entries(settings(schema, server)).map(([name, value]) => `set_config(${literal(name)}, ${literal(value)}, false)`);
  return { connection: { ...STARTUP }, prelude: `SELECT ${[...sets, ...(keepHeap ? [KEEP_HEAP] : [])].join(", ")}` };
}

const pidOf = async (sql: postgres.ReservedSql): Promise<number> =>
  (await sql.unsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid"))[0]!.pid;

/**
 * Whether two of `sql`'s connections share server sessions: null when each keeps its own (a
 * server, or a pooler in session mode), else what was seen. One connection asks for its backend,
 * then a second opens a transaction and asks for its own, and the first asks again meanwhile. With
 * a session each, the second never meets the first's backend and the first keeps it. A pooler in
 * transaction mode lends the first's backend, idle between its statements, to the second's
 * transaction (PgBouncer reuses idle server connections last in, first out: its FAQ), and the first
 * then gets another.
 * apm-sync's stream locks and settings live in sessions: a lock taken on a lent backend is held by
 * whichever client has it next. `rounds` tries, as another client can take the idle backend first.
 */
export async function sessionsShared(sql: postgres.Sql, rounds = 3): Promise<string | null> {
  const first = await sql.reserve();
  let second: postgres.ReservedSql | null = null;
  try {
    second = await sql.reserve();
    for (let round = 0; round < rounds; round++) {
      const before = await pidOf(first);
      await second.unsafe("BEGIN");
      try {
        const lent = await pidOf(second);
        const after = await pidOf(first);
        if (lent === before) return `a second connection's transaction ran on the first's server process (${lent})`;
        if (after !== before) return `one connection's statements ran on two server processes (${before}, then ${after})`;
      } finally {
        await second.unsafe("ROLLBACK");
      }
    }
    return null;
  } finally {
    first.release();
    second?.release();
  }
}
