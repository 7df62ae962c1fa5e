// The job queue: graphile-worker in the warehouse Postgres, in a schema of its own next to the
// warehouse's (`apm` -> `apm_queue`). It needs a real Postgres (LISTEN/NOTIFY, several
// connections): the embedded database runs the single-process CLI only.
import { Logger as GraphileLogger, type LogLevel, makeWorkerUtils, runMigrations, type WorkerUtils } from "graphile-worker";
import type postgres from "postgres";
import type { Config } from "../config.ts";
import { quoteIdent } from "../db/sqlText.ts";
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

/** graphile-worker's log lines through our logger (its debug lines stay at debug). */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level: LogLevel, message: string) => {
    const text = scope.label ? `queue ${scope.label}: ${message}` : `queue: ${message}`;
    if (level === "error") logger.error(text);
    else if (level === "warning") logger.warn(text);
    else if (level === "info") logger.info(text);
    else logger.debug(text);
  });
}

/**
 * Whether `migrate` can make or update the queue: graphile-worker makes its schema with CREATE
 * SCHEMA IF NOT EXISTS at its first install, which asks for CREATE on the database even when the
 * schema was made beforehand; once installed, it only migrates its tables.
 */
export async function queueMigratable(sql: postgres.Sql, config: Pick<Config, "dbSchema">): Promise<boolean> {
  const table = `${quoteIdent(queueSchema(config))}.migrations`;
  const [row] = await sql<{ ok: boolean }[]>`
    select has_database_privilege(current_database(), 'CREATE') or to_regclass(${table}) is not null as ok`;
  return row?.ok === true;
}

/** Creates or updates the queue's schema (graphile-worker's own migrations). */
export async function migrateQueue(config: Config, logger: Logger): Promise<void> {
  await runMigrations({ connectionString: queueUrl(config), schema: queueSchema(config), logger: graphileLogger(logger) });
}

/** Runs `fn` with graphile-worker's utilities on the queue (released afterwards). */
export async function withQueue<T>(config: Config, logger: Logger, fn: (utils: WorkerUtils) => Promise<T>): Promise<T> {
  const utils = await makeWorkerUtils({
    connectionString: queueUrl(config),
    schema: queueSchema(config),
    logger: graphileLogger(logger),
  });
  try {
    await utils.migrate();
    return await fn(utils);
  } finally {
    await utils.release();
  }
}
