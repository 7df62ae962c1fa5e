// The measured side of `npm run bench`: one statistics backfill through the real engine, run as
// its own process (compiled JavaScript) so that its CPU time and peak RSS are the engine's alone.
// Configuration comes from the environment like any run (DATABASE_URL unset: embedded PGlite).
// --streams a,b: other streams than the 5 statistics. --no-rollups: the write path without rollup
// maintenance, to measure what it costs.
// Prints one JSON line: rows, requests, seconds, cpuSeconds, rssBeforeMiB, peakRssMiB, exitCode.
import { parseArgs } from "node:util";
import { createApiClient } from "../src/api/client.ts";
import { STAT_TYPES } from "../src/catalogue/stats.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/connect.ts";
import { migrateDatabase } from "../src/db/migrate.ts";
import { runJob } from "../src/engine/run.ts";
import { createLogger } from "../src/util/logger.ts";

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
const config = loadConfig({ now: to });
const logger = createLogger({ level: config.log.level, format: "plain" });
const database = await openDatabase(config);
await migrateDatabase(database);
const client = createApiClient(config.api, { logger, now: () => to });
const mib = (b: number) => Math.round(b / 1024 / 1024);
const rssBefore = process.memoryUsage().rss;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await runJob(
  { config, client, database, logger, now: () => to, rollups: !values["no-rollups"] },
  {
    command: "backfill",
    mode: { kind: "backfill", from, to },
    streams: values.streams?.split(",") ?? STAT_TYPES.map((t) => `stat.${t}`),
    args: { bench: true },
  },
);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
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
    rssBeforeMiB: mib(rssBefore),
    peakRssMiB: mib(process.resourceUsage().maxRSS * 1024),
    exitCode: result.exitCode,
  })}\n`,
);
