// `apm-sync migrate`: applies the migrations of migrations/ in the configured schema.
// Exit codes: 0 applied or already up to date, 1 failure, 2 configuration error.
import { ConfigError, loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/connect.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { describeError } from "../src/engine/describe-error.ts";
import { migrateQueue, queueSchema } from "../src/queue/queue.ts";
import { createLogger } from "../src/util/logger.ts";

export async function run(_opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({
      configFile: typeof global.config === "string" ? global.config : undefined,
      // Migrating needs no API address (a value that is set is still validated).
      requireBaseUrl: false,
    });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const log = { info: (msg: string) => process.stderr.write(`${msg}\n`) };
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    database = await openDatabase(config, log);
    const result = await migrateDatabase(database);
    const what = result.applied === 0 ? "already up to date" : `applied ${result.applied} migration(s)`;
    process.stdout.write(`migrate: schema ${database.schema}: ${what}; ${result.total} recorded\n`);
    // The job queue (scale-out) lives next to the warehouse; the embedded database has none.
    if (config.databaseUrl) {
      await migrateQueue(config, createLogger({ level: "warn", format: "plain" }));
      process.stdout.write(`migrate: queue schema ${queueSchema(config)}: ready\n`);
    }
    return 0;
  } catch (e) {
    // Never echo DATABASE_URL: it may hold a password.
    process.stderr.write(`apm-sync migrate failed: ${describeError(e)}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}
