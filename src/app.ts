// Builds the dependencies of a command from the configuration: logger, output, API client,
// database (checked, then migrated), progress display. Jobs stay thin: parse flags, call
// `withApp`, call the engine. Every configuration or usage problem ends here as exit 2.
import { createApiClient } from "./api/client.ts";
import type { ApiClient } from "./api/types.ts";
import { type Config, ConfigError, type LogFormat, loadConfig, requestedLogFormat } from "./config.ts";
import { type Database, openDatabase } from "./db/driver/connect.ts";
import { DB_CONNECTIONS_MIN, QUEUE_CONNECTIONS } from "./db/driver/connection-budget.ts";
import { dbStep } from "./engine/db-step.ts";
import { describeError } from "./engine/describe-error.ts";
import { logProgress, type ProgressSink, silentProgress, ttyProgress } from "./engine/progress.ts";
import type { EngineDeps } from "./engine/types.ts";
import { type AppMetrics, createAppMetrics, type MetricsOptions, warehouseSource } from "./metrics/metrics.ts";
import { pushMetrics } from "./metrics/push.ts";
import { databaseProblem, prepareDataDir, requireDataDir, requireOwnSessions } from "./preflight.ts";
import { installLastResort, installShutdown } from "./shutdown.ts";
import { openTracing } from "./tracing/open.ts";
import { NO_TRACING } from "./tracing/tracer.ts";
import { printProblem, UsageError } from "./usage-error.ts";
import { createLogger, createOutput, type Logger, type Output } from "./util/logger.ts";
import { routeProcessWarnings } from "./util/process-warnings.ts";
import { appliedMigrations, migrateDatabase } from "./warehouse/migrate.ts";

export interface AppOptions {
  /** Global CLI options (--config, --log-format). */
  readonly global: Record<string, unknown>;
  /** Environment to read (tests and the demo pass their own). */
  readonly env?: NodeJS.ProcessEnv;
  /** Show progress (TTY bar or periodic lines). */
  readonly progress?: boolean;
  /** false: no API address or token needed (status, report, migrate). */
  readonly needsApi?: boolean;
  /**
   * "create" (default): a missing warehouse is created and migrated; "existing": it must be there
   * (status, report: a mistyped location is an error, not a new empty database); "migrate": the
   * command migrates itself.
   */
  readonly warehouse?: "create" | "existing" | "migrate";
  /** sync/backfill: SIGTERM/SIGINT stop gracefully (exit 143/130), and the last-resort handler is installed. */
  readonly graceful?: boolean;
  /** Checks flags against the config before anything is opened; throw UsageError to exit 2. */
  readonly validate?: (config: Config) => void;
  /** Count for Prometheus as this command; `push`: to APM_PUSHGATEWAY_URL (when set) at the end. */
  readonly metrics?: MetricsOptions & { readonly push: boolean };
  /** sync, backfill, worker: spans to the OTLP endpoint when one is configured (src/tracing), sent at the end. */
  readonly trace?: boolean;
  /** worker, enqueue: the job queue's pool takes QUEUE_CONNECTIONS of APM_DB_CONNECTIONS, the warehouse the rest. */
  readonly queue?: boolean;
}

export interface App {
  readonly config: Config;
  readonly logger: Logger;
  /** The command's result lines (JSON lines with --log-format json). */
  readonly out: Output;
  readonly database: Database;
  readonly deps: EngineDeps;
  /** Set when the command counts for Prometheus (AppOptions.metrics). */
  readonly metrics: AppMetrics | null;
}

/** Reads config; on a config or usage problem prints it and returns 2 without any request. */
export async function withApp(opts: AppOptions, fn: (app: App) => Promise<number>): Promise<number> {
  const config = readConfig(opts);
  if (config === null) return 2;
  // On a terminal the log lines go above the live progress bar, never through it.
  let client: ApiClient | undefined;
  // Progress names the calls that keep a run waiting (a trickling answer, a Retry-After).
  const pending = () => client?.pending() ?? [];
  // After a signal the progress says what was done and what is left, not a finished-looking count
  // (relayed: the shutdown is installed with the logger, which writes above the bar).
  const stopped = new AbortController();
  const bar =
    opts.progress && process.stderr.isTTY && config.log.format !== "json" ? ttyProgress(process.stderr, pending, stopped.signal) : null;
  const logger = appLogger(config, bar ? { write: (line: string) => bar.log(line.trimEnd()) } : undefined);
  let database: Database | undefined;
  const metrics = opts.metrics ? createAppMetrics(opts.metrics) : null;
  const tracing = opts.trace ? await openTracing(config, logger) : NO_TRACING;
  const { tracer } = tracing;
  client = createApiClient(config.api, { logger, now: Date.now, tracer, ...(metrics ? { metrics: metrics.observer } : {}) });
  const progress: ProgressSink = bar ?? (opts.progress ? logProgress(logger, undefined, pending, stopped.signal) : silentProgress);
  const shutdown = opts.graceful ? installShutdown(logger, config.sync.shutdownGraceMs) : null;
  shutdown?.stopping.addEventListener("abort", () => stopped.abort(), { once: true });
  if (opts.graceful) installLastResort(logger);
  const unroute = routeProcessWarnings(logger);
  try {
    const settings = opts.queue ? { ...config, dbConnections: config.dbConnections - QUEUE_CONNECTIONS } : config;
    database = await openWarehouse(settings, logger, opts.warehouse ?? "create", shutdown?.hardStop);
    metrics?.readFrom(warehouseSource(database, config, logger, Date.now));
    const stop = shutdown ? { stopping: shutdown.stopping, hardStop: shutdown.hardStop } : {};
    const observe = metrics ? { metrics: metrics.observer } : {};
    const deps: EngineDeps = { config, client, database, logger, now: Date.now, progress, tracer, ...stop, ...observe };
    const code = await fn({ config, logger, out: createOutput(config.log.format), database, deps, metrics });
    return shutdown?.exitCode() ?? code;
  } catch (e) {
    return failed(e, logger, config.log.format);
  } finally {
    shutdown?.dispose();
    progress.stop();
    // Before the database closes: the pushed ledger gauges are read now.
    if (metrics && opts.metrics?.push && config.metrics.pushgatewayUrl && database)
      await pushMetrics(metrics.registry, config.metrics.pushgatewayUrl, metrics.command, logger);
    // Bounded, never throws: a collector that is down costs one warning, not the exit code.
    await tracing.shutdown();
    await client.close();
    await database?.close();
    // Last: a warning while the database or the collector closes is a log record too.
    unroute();
  }
}

/** Opens the database; its first statements tell a wrong DATABASE_URL from a failure (exit 2 vs 1). */
async function openWarehouse(
  config: Config,
  logger: Logger,
  warehouse: NonNullable<AppOptions["warehouse"]>,
  hardStop?: AbortSignal,
): Promise<Database> {
  if (!config.databaseUrl) (warehouse === "existing" ? requireDataDir : prepareDataDir)(config.dataDir);
  const database = await openDatabase(config, { info: (m) => logger.info(m), warn: (m) => logger.warn(m) });
  // A connection lost or a server starting up meanwhile (a restart as a scheduled run starts) is
  // waited out for up to APM_DB_RETRY, as during a run; a wrong database, role or address is not.
  let answered = false;
  try {
    await dbStep({ config, logger, hardStop }, "the warehouse's opening", async () => {
      // The first round trip: a wrong database, role or address shows here, before any migration.
      if (!answered) {
        await database.sql`select 1`.catch((e: unknown) => Promise.reject(databaseProblem(e, config.dbSchema) ?? e));
        if (config.databaseUrl) await requireOwnSessions(database.sql);
      }
      answered = true;
      if (warehouse === "existing" && config.databaseUrl && (await appliedMigrations(database.sql, database.schema)).length === 0)
        throw new UsageError(
          `no warehouse in schema ${database.schema} at DATABASE_URL (check DATABASE_URL and APM_DB_SCHEMA, or run \`apm-sync sync\` first)`,
        );
      if (warehouse !== "migrate") await migrateDatabase(database);
    });
    return database;
  } catch (e) {
    await database.close();
    throw databaseProblem(e, config.dbSchema) ?? e;
  }
}

/** What a command that only talks to the API gets: no database is opened, nothing is written. */
export interface ApiApp {
  readonly config: Config;
  readonly logger: Logger;
  readonly client: ApiClient;
}

/** Like withApp, without the warehouse (`check`): config, logger and API client only. */
export async function withApi(opts: Omit<AppOptions, "needsApi" | "progress">, fn: (app: ApiApp) => Promise<number>): Promise<number> {
  const config = readConfig(opts);
  if (config === null) return 2;
  const logger = appLogger(config);
  const unroute = routeProcessWarnings(logger);
  // `check` probes every operation and stops probing a host nobody answers on by itself.
  const client = createApiClient(config.api, { logger, now: Date.now, breakerThreshold: Number.POSITIVE_INFINITY });
  try {
    return await fn({ config, logger, client });
  } catch (e) {
    return failed(e, logger, config.log.format);
  } finally {
    await client.close();
    unroute();
  }
}

/** The validated config, or null after printing the configuration or usage problem (exit 2). */
function readConfig(opts: Pick<AppOptions, "global" | "env" | "needsApi" | "validate" | "queue">): Config | null {
  try {
    const config = loadConfig({
      env: opts.env,
      configFile: typeof opts.global.config === "string" ? opts.global.config : undefined,
      flags: { logFormat: opts.global.logFormat },
      requireApi: opts.needsApi !== false,
    });
    opts.validate?.(config);
    if (opts.queue && config.databaseUrl) queueConnections(config.dbConnections);
    return config;
  } catch (e) {
    if (!(e instanceof ConfigError) && !(e instanceof UsageError)) throw e;
    printProblem(e, requestedLogFormat(opts.global.logFormat, opts.env));
    return null;
  }
}

/** Enough connections for the job queue's pool and the warehouse's fewest, or a usage error that says how many. */
function queueConnections(connections: number): void {
  const needed = DB_CONNECTIONS_MIN + QUEUE_CONNECTIONS;
  if (connections < needed)
    throw new UsageError(
      `APM_DB_CONNECTIONS=${connections} is too few for the job queue: it takes ${QUEUE_CONNECTIONS} of them and the warehouse needs ${DB_CONNECTIONS_MIN}; set APM_DB_CONNECTIONS to ${needed} or more`,
    );
}

function appLogger(config: Config, destination?: { write: (line: string) => void }): Logger {
  return createLogger({
    level: config.log.level,
    format: config.log.format,
    redactKeys: [config.api.tokenHeader],
    ...(destination ? { destination } : {}),
  });
}

/** A usage problem found late is still exit 2; anything else is logged once and exit 1. */
function failed(e: unknown, logger: Logger, format: LogFormat): number {
  if (e instanceof UsageError) {
    printProblem(e, format);
    return 2;
  }
  logger.error(`failed: ${describeError(e)}`);
  return 1;
}
