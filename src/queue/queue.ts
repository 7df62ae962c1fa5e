// The job queue: graphile-worker in the warehouse Postgres, in a schema of its own next to the
// warehouse's (`apm` -> `apm_queue`). It needs a real Postgres (LISTEN/NOTIFY, several
// connections): the embedded database runs the single-process CLI only.
import { Logger as GraphileLogger, type LogLevel, makeWorkerUtils, runMigrations, type WorkerUtils } from "graphile-worker";
import pg from "pg";
import type postgres from "postgres";
import type { Config } from "../config.ts";
import { QUEUE_CONNECTIONS } from "../db/driver/connection-budget.ts";
import { quoteLiteral as literal, quoteIdent } from "../db/sqlText.ts";
import { UsageError } from "../usage-error.ts";
import type { Logger } from "../util/logger.ts";

/** Schema of the queue's tables: the warehouse schema's name + `_queue`. */
export function queueSchema(config: Pick<Config, "dbSchema">): string {
  return `${config.dbSchema}_queue`;
}

/** The connection string of the queue, or a usage error on the embedded database. */
export function queueUrl(config: Pick<Config, "databaseUrl">): string {
  if (!config.databaseUrl)
    throw new UsageError(
      "the job queue needs a Postgres server: set DATABASE_URL (the embedded database runs `sync` and `backfill` in one process)",
    );
  return config.databaseUrl;
}

/**
 * graphile-worker's advice to give its pool as many connections as jobs run at once: the pool is
 * kept small on purpose (QUEUE_CONNECTIONS), and a job holds none of it while it runs.
 */
const POOL_ADVICE = /^WARNING: having maxPoolSize \(\d+\) smaller than concurrency/;

/** graphile-worker's log lines through our logger (its debug lines stay at debug). */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level: LogLevel, message: string) => {
    const text = scope.label ? `queue ${scope.label}: ${message}` : `queue: ${message}`;
    if (POOL_ADVICE.test(message)) logger.debug(text);
    else if (level === "error") logger.error(text);
    else if (level === "warning") logger.warn(text);
    else if (level === "info") logger.info(text);
    else logger.debug(text);
  });
}

/**
 * Whether `migrate` can make or update the queue: in a schema of its own making, graphile-worker
 * needs CREATE on the database (its CREATE SCHEMA IF NOT EXISTS asks for it even when the schema
 * exists); in one made beforehand, CREATE on that schema (see `bootstrapIn`); once installed, it
 * only migrates its tables.
 */
export async function queueMigratable(sql: postgres.Sql, config: Pick<Config, "dbSchema">): Promise<boolean> {
  const schema = queueSchema(config);
  const table = `${quoteIdent(schema)}.migrations`;
  const [row] = await sql<{ ok: boolean }[]>`
    select has_database_privilege(current_database(), 'CREATE') or to_regclass(${table}) is not null
      or case when to_regnamespace(${quoteIdent(schema)}) is null then false else has_schema_privilege(${schema}, 'CREATE') end as ok`;
  return row?.ok === true;
}

/**
 * The queue in a schema made beforehand (by a DBA, for a role without CREATE on the database):
 * graphile-worker's bookkeeping table, made as its first install makes it but without its CREATE
 * SCHEMA, so that it finds itself installed and only migrates its tables. Nothing where the schema
 * is missing (graphile-worker makes both) or the table exists.
 */
async function bootstrapIn(pgPool: pg.Pool, schema: string): Promise<void> {
  const q = quoteIdent(schema);
  await pgPool.query(`DO $$ BEGIN
  IF to_regnamespace(${literal(q)}) IS NOT NULL AND to_regclass(${literal(`${q}.migrations`)}) IS NULL THEN
    CREATE TABLE IF NOT EXISTS ${q}.migrations (id int PRIMARY KEY, ts timestamptz DEFAULT now() NOT NULL, breaking boolean NOT NULL DEFAULT false);
  END IF;
END $$`);
}

/** What graphile-worker is given in this process: its schema, our logger, and one pool of QUEUE_CONNECTIONS. */
export interface QueueOptions {
  readonly pgPool: pg.Pool;
  readonly schema: string;
  readonly logger: GraphileLogger;
}

/**
 * Runs `fn` with the queue's options; its pool is closed afterwards. Everything graphile-worker
 * does in the process (its LISTEN, fetching, completing and adding jobs, its cron) shares the
 * pool, so the queue opens QUEUE_CONNECTIONS at most (its own pools would open up to 10 each),
 * under apm-sync's application_name. A connection's error is logged, never thrown at the process.
 */
export async function withQueuePool<T>(config: Config, logger: Logger, fn: (queue: QueueOptions) => Promise<T>): Promise<T> {
  const pgPool = new pg.Pool({ connectionString: queueUrl(config), max: QUEUE_CONNECTIONS, application_name: "apm-sync" });
  const lost = (e: Error) => logger.warn(`queue: a connection failed: ${e.message}`);
  pgPool.on("error", lost);
  pgPool.on("connect", (client) => client.on("error", lost));
  const schema = queueSchema(config);
  try {
    await bootstrapIn(pgPool, schema);
    return await fn({ pgPool, schema, logger: graphileLogger(logger) });
  } finally {
    await pgPool.end();
  }
}

/** Creates or updates the queue's schema (graphile-worker's own migrations). */
export async function migrateQueue(config: Config, logger: Logger): Promise<void> {
  await withQueuePool(config, logger, (queue) => runMigrations(queue));
}

/** Runs `fn` with graphile-worker's utilities on the queue (released afterwards). */
export async function withQueue<T>(config: Config, logger: Logger, fn: (utils: WorkerUtils) => Promise<T>): Promise<T> {
  return withQueuePool(config, logger, async (queue) => {
    const utils = await makeWorkerUtils(queue);
    try {
      await utils.migrate();
      return await fn(utils);
    } finally {
      await utils.release();
    }
  });
}
