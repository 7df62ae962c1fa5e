// One connection path for both databases: postgres.js (+ drizzle over it) to a real Postgres,
// or to the embedded PGlite through an in-process connection.
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import pLimit, { type LimitFunction } from "p-limit";
import postgres from "postgres";
import { warehouse } from "../tables.ts";
import { connectionBudget, DB_CONNECTIONS_DEFAULT, STREAMS_AT_ONCE } from "./connection-budget.ts";
import { startEmbedded } from "./embedded.ts";
import { type VacuumOptions, type VacuumResult, vacuumChurned } from "./embedded-vacuum.ts";
import { boundWal, WAL_BOUND_TAG } from "./embedded-wal.ts";
import { type LockSession, provideLockSessions } from "./lockSession.ts";
import { sessionOptions } from "./session.ts";
import { isDiskFull } from "./transient.ts";

/** Minimal logger (pino's satisfies it). */
export interface DbLogger {
  info(msg: string): void;
  warn?(msg: string): void;
}

/**
 * An open warehouse connection. `sql` and `db` share one pool whose search_path is `schema`.
 * Which database it is (a Postgres server or the embedded PGlite) is known only here.
 */
export interface Database {
  readonly sql: postgres.Sql;
  readonly db: PostgresJsDatabase<typeof warehouse>;
  readonly schema: string;
  /**
   * Vacuums the tables this process left dead rows in where no autovacuum runs: the embedded
   * database (embedded-vacuum.ts). Nothing on a Postgres server, whose autovacuum does it.
   */
  vacuum(opts?: VacuumOptions): Promise<VacuumResult>;
  close(): Promise<void>;
  /**
   * Runs a stream target's work once one of this database's stream slots is free: as many as the
   * connection budget allows (connection-budget.ts), shared by every run of the process, so a
   * worker's jobs at once (`--concurrency`) hold no more stream locks than one run would.
   */
  readonly streams: LimitFunction;
}

/** The settings the warehouse is opened with (the config's `databaseUrl`, `dataDir`, `dbSchema`, `dataDirWaitMs`). */
export interface DatabaseSettings {
  /** A Postgres URL; null for the embedded database under `dataDir`. */
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  readonly dbSchema: string;
  /** How long to wait for another process to close the embedded database (default: see embedded-lock.ts). */
  readonly dataDirWaitMs?: number;
  /** Bytes the embedded database keeps free on its disk (APM_DISK_FLOOR; default: embedded-disk.ts). */
  readonly diskFloorBytes?: number;
  /** Connections opened into a real server at most (APM_DB_CONNECTIONS; default DB_CONNECTIONS_DEFAULT). */
  readonly dbConnections?: number;
}

export interface OpenOptions {
  /** Pool size for a real server (default: the connection budget's); the embedded database always uses 1. */
  max?: number;
  /** postgres.js debug hook, e.g. to count statements in tests. */
  debug?: (connection: number, query: string, parameters: unknown[]) => void;
}

const TIMESTAMPTZ_OID = 1184;

/** Seconds a pool's connection stays open unused before the pool closes it (postgres.js idle_timeout). */
const POOL_IDLE_SECONDS = 30;

/**
 * Opens the warehouse. With `databaseUrl` null, starts PGlite under `<dataDir>/pgdata`, waiting up
 * to `dataDirWaitMs` for another process to close it.
 * Does not migrate (see migrate.ts).
 */
export async function openDatabase(config: DatabaseSettings, log?: DbLogger, options: OpenOptions = {}): Promise<Database> {
  const schema = config.dbSchema;
  // Each connection's session is made once, when it opens (session.ts): no SET per checkout.
  const common = { onnotice: () => {}, ...(options.debug ? { debug: options.debug } : {}) };
  if (config.databaseUrl) {
    const url = withoutSearchPath(config.databaseUrl);
    const budget = connectionBudget(config.dbConnections ?? DB_CONNECTIONS_DEFAULT);
    const pool = sessionOptions(schema, { server: true, keepHeap: true });
    const sql = postgres(url, { ...common, ...pool, idle_timeout: POOL_IDLE_SECONDS, max: options.max ?? budget.pool });
    // Stream locks on single-connection clients of their own, from a small free list: a pinned
    // connection of the shared pool (`reserve()`) does not survive a lost connection (postgres.js
    // puts it back in the pool while it is still reserved), a client of its own reconnects.
    // A lock's connection is idle by design while its stream runs: a server's idle_session_timeout
    // (Postgres 14) would end it, and the lock with it, at every pause longer than the timeout
    // (session.ts sets it off); a lock's connection is never closed for being idle.
    const idle: postgres.Sql[] = [];
    const all: postgres.Sql[] = [];
    provideLockSessions(sql, (): LockSession => {
      let own = idle.pop();
      if (!own) {
        own = postgres(url, { ...common, ...sessionOptions(schema, { server: true }), max: 1 });
        all.push(own);
      }
      const session = own;
      const end = () => {
        all.splice(all.indexOf(session), 1);
        void session.end({ timeout: 0 }).catch(() => {});
      };
      return { sql: own, sharedWithWrites: false, release: (healthy) => (healthy ? void idle.push(session) : end()) };
    });
    return wrap(
      sql,
      schema,
      budget.streams,
      async () => ({ tables: [], deadRows: 0 }),
      async () => {
        await Promise.all([sql, ...all].map((s) => s.end({ timeout: 5 })));
      },
    );
  }
  const server = await startEmbedded(config.dataDir, schema, {
    ...(config.dataDirWaitMs !== undefined ? { waitMs: config.dataDirWaitMs } : {}),
    ...(config.diskFloorBytes !== undefined ? { diskFloor: config.diskFloorBytes } : {}),
    onWait: (m) => (log?.warn ?? log?.info)?.call(log, m),
  });
  log?.info(`embedded database (PGlite) at ${server.dataPath}`);
  // PGlite runs one query at a time, in one session: a single connection, which also holds the
  // stream locks. postgres.js's `socket` option (a function returning the connection's stream) is
  // in its code and README, not in its type declarations.
  const socket = { socket: () => server.connect() } as Record<string, unknown>;
  // The WAL bound's checks come whenever their clock says: a statement hook sees the caller's only.
  const hook = options.debug;
  const debug = hook ? { debug: (c: number, q: string, p: unknown[]) => void (q.startsWith(WAL_BOUND_TAG) || hook(c, q, p)) } : {};
  const session = sessionOptions(schema, { server: false });
  const sql = postgres({ ...common, ...session, ...debug, ...socket, user: "postgres", database: "postgres", max: 1 });
  provideLockSessions(sql, () => ({ sql, sharedWithWrites: true, release: () => {} }));
  // Below the disk's floor the checkpoint is refused with the rest, and the statement that meets it says why.
  const wal = boundWal(sql, (e) => {
    if (!isDiskFull(e)) log?.info(`embedded database: checkpoint failed (${e instanceof Error ? e.message : e}); tried again shortly`);
  });
  // The stream locks share the one connection: the streams at once cost none.
  return wrap(
    sql,
    schema,
    STREAMS_AT_ONCE,
    (opts) => vacuumChurned(sql, opts),
    async () => {
      try {
        await wal.stop();
        await sql.end({ timeout: 5 });
      } finally {
        await server.stop();
      }
    },
  );
}

/**
 * `url` without a `search_path` parameter. It was once sent after apm-sync's own and won over
 * APM_DB_SCHEMA (tables created in `public`, the migrations recorded in the schema); the schema is
 * now set by each connection's first statement (session.ts), which wins over any startup
 * parameter, `options=-c search_path=` included, but a connection pooler refuses the parameter.
 */
function withoutSearchPath(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  const keys = [...params.keys()].filter((k) => k.toLowerCase() === "search_path");
  if (keys.length === 0) return url;
  for (const k of keys) params.delete(k);
  const rest = params.toString();
  return rest ? `${url.slice(0, q)}?${rest}` : url.slice(0, q);
}

/**
 * drizzle over a postgres.js client. drizzle makes timestamptz pass through as text for its own
 * mapping; postgres.js's Date handling is put back so raw `sql` queries return Dates (drizzle's
 * timestamptz columns, mode "date", accept a Date as well as text). The parsers live in the
 * pool's options, shared with reserved connections.
 */
export function drizzleKeepingDates(sql: postgres.Sql): PostgresJsDatabase<typeof warehouse> {
  const parse = sql.options.parsers[TIMESTAMPTZ_OID];
  const serialize = sql.options.serializers[TIMESTAMPTZ_OID];
  const db = drizzle(sql, { schema: warehouse });
  if (parse) sql.options.parsers[TIMESTAMPTZ_OID] = parse;
  if (serialize) sql.options.serializers[TIMESTAMPTZ_OID] = serialize;
  return db;
}

function wrap(sql: postgres.Sql, schema: string, streams: number, vacuum: Database["vacuum"], close: () => Promise<void>): Database {
  const db = drizzleKeepingDates(sql);
  let closed = false;
  return {
    sql,
    db,
    schema,
    streams: pLimit(streams),
    vacuum,
    close: async () => {
      if (closed) return;
      closed = true;
      await close();
    },
  };
}
