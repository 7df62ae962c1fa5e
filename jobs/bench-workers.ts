// `npm run bench:workers`: the same queued backfill of the five statistics run by 1, 2 and 4 worker
// processes against a sandbox that answers every request after 100 ms (the latency of a real
// service), without a rate limit; prints a table of rows/s and the speed-up over 1 worker, with the
// CPU seconds the workers and the sandbox used. Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:workers [-- --days 2 --projects 2 --concurrency 2 --window-concurrency 1 --workers 1,2,4]
// One window at a time per job by default, so that a job waits on the API's latency as it would
// on a rate-limited real service; on this 2-core machine a CPU-bound run (sandbox, engine and
// Postgres share the cores) cannot show what more workers buy.
// Each worker is its own process with its own rate governor; APM_RPS is set high so that the
// latency, not the governor, is what the workers share out (see docs/operating.md, "Scaling out").
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { STAT_TYPES } from "../src/catalogue/stats.ts";
import { DAY } from "../src/catalogue/types.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { cpuOf } from "./bench-copy.ts";
import { compileTo } from "./compile.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "2" },
    projects: { type: "string", default: "2" },
    concurrency: { type: "string", default: "2" },
    "window-concurrency": { type: "string", default: "1" },
    workers: { type: "string", default: "1,2,4" },
    // One job per stream and project by default: jobs of one stream and project would wait on
    // each other's lock (tried again later), and a worker run --until-idle may end before that.
    chunk: { type: "string" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("bench:workers: set DATABASE_URL to a Postgres you can write to (schemas apm_bw_* are created and dropped)\n");
  process.exit(2);
}
const root = packageRoot();
const to = Math.floor(Date.now() / DAY) * DAY - DAY;
const from = to - Number(values.days) * DAY;
// The workers run compiled, as in production (tsx's start-up would cost each several CPU seconds).
const outDir = join(root, ".scratch-bench-workers");
compileTo(outDir);
const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0", "--latency-ms", "100..100"]);
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });

/** A CLI run; `cpu` is its CPU seconds as last read from /proc while it ran (null where there is no /proc). */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; cpu: number | null }> {
  const child = spawn(process.execPath, [join(outDir, "src", "cli.js"), ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let cpu: number | null = null;
  const sample = setInterval(() => {
    cpu = cpuOf(child.pid!) ?? cpu;
  }, 250);
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.resume();
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearInterval(sample);
      resolve({ code, out, cpu });
    }),
  );
}

/** Rows of the five statistics in `schema`. */
async function statRows(schema: string): Promise<number> {
  const counts = STAT_TYPES.map((t) => `(SELECT count(*) FROM "${schema}"."stat_${t}")`).join(" + ");
  const [row] = await admin.unsafe<{ n: string }[]>(`SELECT (${counts})::text AS n`);
  return Number(row?.n ?? 0);
}

interface Result {
  workers: number;
  seconds: number;
  rows: number;
  workerCpu: number | null;
  sandboxCpu: number | null;
}

const results: Result[] = [];
for (const n of values.workers!.split(",").map(Number)) {
  const schema = `apm_bw_${n}`;
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    APM_DB_SCHEMA: schema,
    ...sandbox.env,
    APM_RPS: "1000",
    APM_CONCURRENCY: "16",
    APM_LOG_LEVEL: "warn",
    APM_WINDOW_CONCURRENCY: values["window-concurrency"],
  };
  await cli(["migrate"], env);
  const range = ["--from", new Date(from).toISOString(), "--to", new Date(to).toISOString(), "--streams", "stat"];
  range.push("--chunk", values.chunk ?? `${values.days}d`);
  const queued = await cli(["enqueue", "backfill", ...range], env);
  const sb0 = cpuOf(sandbox.pid);
  const t0 = performance.now();
  const exits = await Promise.all(
    Array.from({ length: n }, () => cli(["worker", "--until-idle", "--concurrency", values.concurrency!], env)),
  );
  const seconds = (performance.now() - t0) / 1000;
  const sb1 = cpuOf(sandbox.pid);
  const bad = exits.filter((e) => e.code !== 0).length;
  const retried = exits.reduce((sum, e) => sum + Number(/(\d+) to be tried again/.exec(e.out)?.[1] ?? 0), 0);
  const cpus = exits.map((e) => e.cpu);
  const workerCpu = cpus.every((c) => c !== null) ? cpus.reduce((a: number, c) => a + c!, 0) : null;
  const r = { workers: n, seconds, rows: await statRows(schema), workerCpu, sandboxCpu: sb0 === null || sb1 === null ? null : sb1 - sb0 };
  results.push(r);
  process.stdout.write(
    `${n} worker(s) x concurrency ${values.concurrency}, ${values["window-concurrency"]} window(s) at once per job: ${r.rows} rows in ${seconds.toFixed(1)} s${bad ? ` (${bad} exited non-zero)` : ""}${retried ? ` (${retried} job run(s) to be tried again)` : ""}; ${queued.out.trim()}\n`,
  );
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
}
sandbox.stop();
await admin.end();
rmSync(outDir, { recursive: true, force: true });

const one = results.find((r) => r.workers === 1) ?? results[0]!;
const rate = (r: Result) => r.rows / r.seconds;
const cpuText = (s: number | null) => (s === null ? "?" : s.toFixed(1));
process.stdout.write(
  `\n${values.days} day(s) x ${values.projects} project(s) of the five statistics, API latency 100 ms, no rate limit\n` +
    "| workers | rows | seconds | rows/s | vs 1 worker | workers' cpu s | sandbox cpu s |\n|---|---|---|---|---|---|---|\n",
);
for (const r of results)
  process.stdout.write(
    `| ${r.workers} | ${r.rows} | ${r.seconds.toFixed(1)} | ${Math.round(rate(r))} | ${(rate(r) / rate(one)).toFixed(2)}x | ${cpuText(r.workerCpu)} | ${cpuText(r.sandboxCpu)} |\n`,
  );
