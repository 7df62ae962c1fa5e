// `npm run bench:warehouse`: does a dashboard query's time depend on how much history is kept?
// Builds two warehouses through the real engine (its own process, tsx) and the sandbox (its own
// process): a month and a year of history of the statistics the documented dashboard queries read
// (stat.transaction, visitors.d), ending now. Then, on both: each dashboard query of docs/design.md (median of
// 5 after a warm-up) and the ratio year / month; `prune` of the year to 30 days of statistics (time,
// partitions and bytes freed); and the write path's rows/s with and without rollup maintenance
// (the month again, into a warehouse whose rollups are not kept). Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:warehouse [-- --projects 2 --month 30 --year 360]
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { DAY, HOUR } from "../src/catalogue/types.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { median } from "./bench-report.ts";
import { dashboardQueries, forWarehouse } from "./dashboard-queries.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    projects: { type: "string", default: "2" },
    month: { type: "string", default: "30" },
    year: { type: "string", default: "360" },
    runs: { type: "string", default: "5" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("bench:warehouse: set DATABASE_URL to a Postgres you can write to (schemas apm_wh_* are created and dropped)\n");
  process.exit(2);
}
const root = packageRoot();
// The queries say now(): the history ends at the last complete hour.
const to = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
const STREAMS = "stat.transaction,visitors.d";
const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0"]);
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
const env = (schema: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: databaseUrl,
  APM_DB_SCHEMA: schema,
  ...sandbox.env,
  APM_RPS: "10000",
  APM_CONCURRENCY: "16",
  APM_WINDOW_CONCURRENCY: "4",
  APM_LOG_LEVEL: "warn",
  ...extra,
});

/** Runs a node script of the repository under tsx; resolves with its stdout and its seconds. */
function run(args: readonly string[], childEnv: NodeJS.ProcessEnv): Promise<{ out: string; seconds: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  return new Promise((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0
        ? resolve({ out, seconds: (performance.now() - t0) / 1000 })
        : reject(new Error(`${args.join(" ")} exited ${code}:\n${out}`)),
    ),
  );
}

/** A warehouse of `days` of history in `schema`, built by the engine; its rows/s. */
async function build(schema: string, days: number, rollups = true): Promise<{ rows: number; seconds: number }> {
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  const flags = ["--from", String(to - days * DAY), "--to", String(to), "--streams", STREAMS, ...(rollups ? [] : ["--no-rollups"])];
  const { out } = await run([join(root, "jobs", "bench-engine.ts"), ...flags], env(schema));
  const r = JSON.parse(out.trim().split("\n").pop()!) as { rows: number; seconds: number; exitCode: number };
  if (r.exitCode !== 0) throw new Error(`the build of ${schema} exited ${r.exitCode}`);
  return r;
}

/** Median milliseconds of each dashboard query on `schema` (one warm-up run first). */
async function timeQueries(schema: string): Promise<number[]> {
  const pcode = sandbox.projects[0]!.pcode;
  const out: number[] = [];
  for (const q of dashboardQueries()) {
    const sql = forWarehouse(q, schema, pcode);
    await admin.unsafe(sql);
    const times: number[] = [];
    for (let i = 0; i < Number(values.runs); i++) {
      const t0 = performance.now();
      await admin.unsafe(sql);
      times.push(performance.now() - t0);
    }
    out.push(median(times));
  }
  return out;
}

async function size(schema: string): Promise<{ bytes: number; partitions: number }> {
  const [r] = await admin.unsafe<{ bytes: string; partitions: string }[]>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS bytes, count(*) FILTER (WHERE c.relispartition)::text AS partitions
     FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'`,
    [schema],
  );
  return { bytes: Number(r!.bytes), partitions: Number(r!.partitions) };
}

const mib = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MiB`;
const rate = (r: { rows: number; seconds: number }) => Math.round(r.rows / r.seconds);
const [monthDays, yearDays] = [Number(values.month), Number(values.year)];
process.stdout.write(`bench:warehouse: ${values.projects} project(s), ${STREAMS}, history ending ${new Date(to).toISOString()}\n`);
const month = await build("apm_wh_month", monthDays);
process.stdout.write(`  build ${monthDays} days: ${month.rows} rows in ${month.seconds.toFixed(1)} s = ${rate(month)} rows/s\n`);
const year = await build("apm_wh_year", yearDays);
process.stdout.write(`  build ${yearDays} days: ${year.rows} rows in ${year.seconds.toFixed(1)} s = ${rate(year)} rows/s\n`);
await admin.unsafe(`ANALYZE`);

const [m, y] = [await timeQueries("apm_wh_month"), await timeQueries("apm_wh_year")];
process.stdout.write(`  dashboard queries (docs/design.md), median of ${values.runs} (ms): ${monthDays} days | ${yearDays} days | ratio\n`);
for (const [i, q] of dashboardQueries().entries())
  process.stdout.write(`    ${q.what}: ${m[i]!.toFixed(1)} | ${y[i]!.toFixed(1)} | x${(y[i]! / m[i]!).toFixed(2)}\n`);

const before = await size("apm_wh_year");
const pruned = await run([join(root, "src", "cli.ts"), "prune"], env("apm_wh_year", { APM_RETENTION: "stat=30d" }));
const after = await size("apm_wh_year");
process.stdout.write(
  `  prune of the ${yearDays} days to stat=30d: ${pruned.seconds.toFixed(1)} s (the whole command); ${before.partitions - after.partitions} partitions, ${mib(before.bytes - after.bytes)} of ${mib(before.bytes)} freed\n`,
);

const bare = await build("apm_wh_norollup", monthDays, false);
process.stdout.write(
  `  write path, ${monthDays} days: ${rate(month)} rows/s with rollups, ${rate(bare)} rows/s without (${((rate(month) / rate(bare) - 1) * 100).toFixed(0)}%)\n`,
);
for (const s of ["apm_wh_month", "apm_wh_year", "apm_wh_norollup"]) await admin.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
sandbox.stop();
await admin.end();
