// The measured side of `npm run bench`: one statistics backfill through the real engine, run as
// its own process (compiled JavaScript) so that its CPU time and peak RSS are the engine's alone
// (the peak is written at exit by jobs/peak-rss.mjs, which the bench preloads).
// Configuration comes from the environment like any run (DATABASE_URL unset: embedded PGlite).
// --streams a,b: other streams than the 5 statistics. --no-rollups: the write path without rollup
// maintenance, to measure what it costs: the windows' marks are dropped by a trigger installed in
// the bench's own schema, so the refresh at the run's end finds nothing to do. The production code
// is the same either way.
// Prints one JSON line: rows, requests, seconds, cpuSeconds (of which systemSeconds in the kernel,
// and mainThreadSeconds on the JavaScript thread: the rest is V8's compiler and garbage collector),
// serverCpuSeconds (the Postgres backends of its connections, null embedded or unreadable),
// rssBeforeMiB, exitCode, windowConcurrency (as the run's configuration set it),
// busyShare and cores (how busy the machine's cores were during the run: bench-budget.ts), gc
// (its collections and their pauses: bench-gc.ts), and the run's shape from its committed windows
// (RunShape): when the first rows were stored, the rate from 20% to 90% of its rows, and the
// seconds after the last ones (the rollups' refresh).
import { parseArgs } from "node:util";
import { createApiClient } from "../src/api/client.ts";
import { STAT_TYPES } from "../src/catalogue/stats.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/driver/connect.ts";
import type { SqlHandle } from "../src/db/driver/exec.ts";
import { MARKS_TABLE } from "../src/db/rollups/spec.ts";
import { runJob } from "../src/engine/run.ts";
import { letOldGenerationDouble } from "../src/util/heap-growth.ts";
import { createLogger } from "../src/util/logger.ts";
import { migrateDatabase } from "../src/warehouse/migrate.ts";
import { backendCpu, backendCpuSince } from "./bench-backends.ts";
import { busyShare, coreTicks, stolenShare } from "./bench-budget.ts";
import { cpuOf } from "./bench-copy.ts";
import { watchGc } from "./bench-gc.ts";
import { RunShape } from "./bench-shape.ts";

const { values } = parseArgs({
  options: {
    from: { type: "string" },
    to: { type: "string" },
    streams: { type: "string" },
    "no-rollups": { type: "boolean", default: false },
  },
});
const from = Number(values.from);
const to = Number(values.to);
// As the CLI does (src/cli.ts), so that the bench measures the engine as users run it.
letOldGenerationDouble();
const config = loadConfig({ now: to });
const logger = createLogger({ level: config.log.level, format: "plain" });
const database = await openDatabase(config);
await migrateDatabase(database);
if (values["no-rollups"]) await dropRollupMarks(database.sql);
const client = createApiClient(config.api, { logger, now: () => to });
const mib = (b: number) => Math.round(b / 1024 / 1024);
const rssBefore = process.memoryUsage().rss;
const pgPort = process.env.DATABASE_URL ? Number(new URL(process.env.DATABASE_URL).port || 5432) : null;
const server0 = pgPort === null ? new Map<number, number>() : await backendCpu(database.sql, pgPort);
const cpu0 = process.cpuUsage();
const main0 = cpuOf(process.pid, process.pid);
const ticks0 = coreTicks();
const gc = watchGc();
const t0 = performance.now();
const shape = new RunShape(t0);
const result = await runJob(
  { config, client, database, logger, now: () => to, progress: shape.sink },
  {
    command: "backfill",
    mode: { kind: "backfill", from, to },
    streams: values.streams?.split(",") ?? STAT_TYPES.map((t) => `stat.${t}`),
    args: { bench: true },
  },
);
const seconds = (performance.now() - t0) / 1000;
const gcCounts = gc.stop();
const ticks1 = coreTicks();
const cpu = process.cpuUsage(cpu0);
const main1 = cpuOf(process.pid, process.pid);
const serverCpuSeconds = pgPort === null ? null : backendCpuSince(server0, await backendCpu(database.sql, pgPort));
let rows = 0;
let requests = 0;
for (const c of result.streams.values()) {
  rows += c.rows;
  requests += c.requests;
}
await client.close();
await database.close();
process.stdout.write(
  `${JSON.stringify({
    rows,
    requests,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    systemSeconds: cpu.system / 1e6,
    mainThreadSeconds: main0 === null || main1 === null ? null : main1 - main0,
    serverCpuSeconds,
    rssBeforeMiB: mib(rssBefore),
    exitCode: result.exitCode,
    windowConcurrency: config.sync.windowConcurrency,
    busyShare: busyShare(ticks0, ticks1),
    stolenShare: stolenShare(ticks0, ticks1),
    cores: ticks1?.cores ?? null,
    gc: gcCounts,
    ...shape.summary(seconds),
  })}\n`,
);

/** A bench-only trigger that drops every rollup mark (a trigger, not a rule: marks are inserted from a WITH). */
async function dropRollupMarks(sql: SqlHandle): Promise<void> {
  await sql.unsafe(`
    CREATE OR REPLACE FUNCTION apm_bench_drop_mark() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
    DROP TRIGGER IF EXISTS apm_bench_drop_mark ON "${MARKS_TABLE}";
    CREATE TRIGGER apm_bench_drop_mark BEFORE INSERT ON "${MARKS_TABLE}" FOR EACH ROW EXECUTE FUNCTION apm_bench_drop_mark()`);
}
