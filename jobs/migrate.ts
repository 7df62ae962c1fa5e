// `apm-sync migrate`: applies the migrations of migrations/ in the configured schema.
// Exit codes: 0 applied or already up to date, 1 failure, 2 configuration error (a database that
// does not exist, a refused role or connection included).
import { withApp } from "../src/app.ts";
import { migrateQueue, queueMigratable, queueSchema } from "../src/queue/queue.ts";
import { createLogger } from "../src/util/logger.ts";
import { migrateDatabase } from "../src/warehouse/migrate.ts";

export async function run(_opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  // Migrating needs no API address (a value that is set is still validated).
  return withApp({ global, needsApi: false, warehouse: "migrate" }, async ({ database, config, out }) => {
    const result = await migrateDatabase(database);
    const what = result.applied === 0 ? "already up to date" : `applied ${result.applied} migration(s)`;
    out.print(`migrate: schema ${database.schema}: ${what}; ${result.total} recorded`, {
      msg: "migrate",
      schema: database.schema,
      applied: result.applied,
      total: result.total,
    });
    // The job queue (scale-out) lives next to the warehouse; the embedded database has none. A
    // role given only its warehouse schema gets no queue: enqueue and worker say what they need.
    if (!config.databaseUrl) return 0;
    const schema = queueSchema(config);
    if (await queueMigratable(database.sql, config)) {
      await migrateQueue(config, createLogger({ level: "warn", format: config.log.format }));
      out.print(`migrate: queue schema ${schema}: ready`, { msg: "migrate queue", schema });
    } else {
      const why = "the role may not create schemas: make it for the role, or grant CREATE on the database; enqueue and worker need it";
      out.print(`migrate: queue schema ${schema}: not made (${why})`, { msg: "migrate queue", schema, made: false });
    }
    return 0;
  });
}
