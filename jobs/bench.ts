// `npm run bench`: backfill of aggregated statistics from the sandbox (no latency) into a real
// Postgres, then a plain COPY of the very same rows into empty copies of the same tables, in the
// same run, so that the ratio is meaningful on a noisy machine. Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench [-- --days 2 --projects 2]
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { createApiClient } from "../src/api/client.ts";
import { STAT_TYPES } from "../src/catalogue/stats.ts";
import { DAY } from "../src/catalogue/types.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/connect.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { runJob } from "../src/engine/run.ts";
import { createLogger } from "../src/util/logger.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "8" },
    projects: { type: "string", default: "2" },
    schema: { type: "string", default: "apm_bench" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("bench: set DATABASE_URL to a Postgres you can write to (a schema apm_bench is created and dropped)\n");
  process.exit(2);
}
const days = Number(values.days);
const schema = values.schema!;
// Yesterday midnight (UTC): every window is complete on the server clock.
const now = Math.floor(Date.now() / DAY) * DAY - DAY;
const from = now - days * DAY;

const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);

// The sandbox runs in its own process, like a real API would: the engine's rows/s and peak RSS
// are then its own, not shared with the data generator.
const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0"]);
const env = {
  APM_BASE_URL: sandbox.url,
  APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
  DATABASE_URL: databaseUrl,
  APM_DB_SCHEMA: schema,
  APM_RPS: "10000",
  APM_CONCURRENCY: "16",
  APM_WINDOW_CONCURRENCY: "4",
};
const config = loadConfig({ env, now });
const logger = createLogger({ level: "warn", format: "plain" });
const database = await openDatabase(config);
await migrateDatabase(database);
const client = createApiClient(config.api, { logger });

const streams = STAT_TYPES.map((t) => `stat.${t}`);
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const result = await runJob(
  { config, client, database, logger, now: () => now },
  { command: "backfill", mode: { kind: "backfill", from, to: now }, streams, args: { bench: true } },
);
const engineSeconds = (performance.now() - t0) / 1000;
let rows = 0;
let requests = 0;
for (const c of result.streams.values()) {
  rows += c.rows;
  requests += c.requests;
}
const peakRss = process.resourceUsage().maxRSS * 1024;
await client.close();
sandbox.stop();

// COPY the same rows into empty copies of the same tables (text format, one stream per table).
let copySeconds = 0;
let copied = 0;
for (const type of STAT_TYPES) {
  const table = `stat_${type}`;
  await admin.unsafe(`CREATE TABLE "${schema}"."copy_${table}" (LIKE "${schema}"."${table}" INCLUDING ALL)`);
  const [counted] = await admin.unsafe<{ n: string }[]>(`SELECT count(*)::text AS n FROM "${schema}"."${table}"`);
  const reader = await database.sql.unsafe(`COPY "${schema}"."${table}" TO STDOUT`).readable();
  const chunks: Buffer[] = [];
  for await (const chunk of reader) chunks.push(chunk as Buffer);
  const c0 = performance.now();
  const writer = await admin.unsafe(`COPY "${schema}"."copy_${table}" FROM STDIN`).writable();
  await pipeline(
    (async function* () {
      yield* chunks;
    })(),
    writer,
  );
  copySeconds += (performance.now() - c0) / 1000;
  copied += Number(counted?.n ?? 0);
}
await database.close();
await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await admin.end();

const engineRate = rows / engineSeconds;
const copyRate = copied / copySeconds;
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
process.stdout.write(
  [
    `bench: backfill of ${streams.join(", ")} for ${values.projects} project(s) x ${days} day(s), sandbox (own process) without latency, Postgres`,
    `  engine: ${rows} rows in ${engineSeconds.toFixed(1)} s = ${Math.round(engineRate)} rows/s; ${requests} requests; exit ${result.exitCode}`,
    `  memory: peak RSS ${mb(peakRss)} (${mb(rssBefore)} before the backfill)`,
    `  COPY:   ${copied} rows in ${copySeconds.toFixed(2)} s = ${Math.round(copyRate)} rows/s (same rows, empty copies of the same tables)`,
    `  ratio:  engine / COPY = ${(engineRate / copyRate).toFixed(3)}`,
  ].join("\n") + "\n",
);
