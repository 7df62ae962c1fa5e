// Builds the dependencies of a command from the configuration: logger, API client, database
// (migrated), progress display. Jobs stay thin: parse flags, call `withApp`, call the engine.
import { createApiClient } from "./api/client.ts";
import { type Config, ConfigError, type ConfigFile, loadConfig } from "./config.ts";
import { type Database, openDatabase } from "./db/connect.ts";
import { migrateDatabase } from "./db/migrate.ts";
import { describeError } from "./engine/describe-error.ts";
import { logProgress, type ProgressSink, silentProgress, ttyProgress } from "./engine/progress.ts";
import { UsageError } from "./engine/targets.ts";
import type { EngineDeps } from "./engine/types.ts";
import { installLastResort, installShutdown } from "./shutdown.ts";
import { createLogger, type Logger } from "./util/logger.ts";

export interface AppOptions {
  /** Global CLI options (--config, --log-format). */
  readonly global: Record<string, unknown>;
  readonly overrides?: Partial<ConfigFile>;
  /** Environment to read (tests and the demo pass their own). */
  readonly env?: NodeJS.ProcessEnv;
  /** Show progress (TTY bar or periodic lines). */
  readonly progress?: boolean;
  /** Skip the API client (status, migrate). */
  readonly needsApi?: boolean;
  /** sync/backfill: SIGTERM/SIGINT stop gracefully (exit 143/130), and the last-resort handler is installed. */
  readonly graceful?: boolean;
  /** Checks flags against the config before anything is opened; throw UsageError to exit 2. */
  readonly validate?: (config: Config) => void;
}

export interface App {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: Database;
  readonly deps: EngineDeps;
}

/** Reads config; on a config or usage problem prints it and returns 2 without any request. */
export async function withApp(opts: AppOptions, fn: (app: App) => Promise<number>): Promise<number> {
  let config: Config;
  try {
    config = loadConfig({
      env: opts.env,
      configFile: typeof opts.global.config === "string" ? opts.global.config : undefined,
      logFormat: opts.global.logFormat as Config["log"]["format"] | undefined,
      overrides: opts.overrides,
      requireBaseUrl: opts.needsApi !== false,
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
  try {
    opts.validate?.(config);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
  // On a terminal the log lines go above the live progress bar, never through it.
  const bar = opts.progress && process.stderr.isTTY && config.log.format !== "json" ? ttyProgress() : null;
  const logger = createLogger({
    level: config.log.level,
    format: config.log.format,
    redactKeys: [config.api.tokenHeader],
    ...(bar ? { destination: { write: (line: string) => bar.log(line.trimEnd()) } } : {}),
  });
  let database: Database | undefined;
  const client = createApiClient(config.api, { logger });
  const progress: ProgressSink = bar ?? (opts.progress ? logProgress(logger) : silentProgress);
  const shutdown = opts.graceful ? installShutdown(logger, config.sync.shutdownGraceMs) : null;
  if (opts.graceful) installLastResort(logger);
  try {
    database = await openDatabase(config, { info: (m) => logger.info(m) });
    await migrateDatabase(database);
    const stop = shutdown ? { stopping: shutdown.stopping, hardStop: shutdown.hardStop } : {};
    const deps: EngineDeps = { config, client, database, logger, now: Date.now, progress, ...stop };
    const code = await fn({ config, logger, database, deps });
    return shutdown?.exitCode() ?? code;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    logger.error(`failed: ${describeError(e)}`);
    return 1;
  } finally {
    shutdown?.dispose();
    progress.stop();
    await client.close();
    await database?.close();
  }
}
