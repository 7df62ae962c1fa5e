// `npm run bench`: the engine's statistics backfill against a plain COPY of the very same rows,
// measured in one run so that the ratio means something on a noisy machine. Prints numbers;
// asserts nothing.
//   DATABASE_URL=postgres://... npm run bench [-- --days 8 --projects 2 --runs 3]
//   DATABASE_URL=postgres://... npm run bench -- --embedded     (PGlite vs Postgres, 2 days)
//   DATABASE_URL=postgres://... npm run bench -- --no-rollups   (the write path without rollup maintenance)
//   DATABASE_URL=postgres://... npm run bench -- --rollups-cost (runs with and without rollups in pairs)
//   DATABASE_URL=postgres://... npm run bench -- --refetch      (each run again over its own rows: every window replaced and compared)
//   DATABASE_URL=postgres://... npm run bench -- --cpu-prof DIR (a V8 CPU profile of each compiled engine
//   run in DIR; `npx tsx jobs/bench-profile.ts DIR/x.cpuprofile` sums its self time by function)
// Honest by construction: the sandbox runs in its own process, is warmed by a first pass and
// then answers from memory (its CPU seconds are printed); the engine runs as compiled JavaScript
// in a process of its own, with `npm run cli`'s memory flags (the warm-up pass runs under tsx, to
// show what the loader adds).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { DAY } from "../src/catalogue/types.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { perRow, runBudget } from "./bench-budget.ts";
import { copySameRows, cpuOf } from "./bench-copy.ts";
import { type BenchMode, type EngineRun, f, runLine as line, type Samples, summaryLines } from "./bench-report.ts";
import { cliMemoryFlags } from "./cli-flags.ts";
import { compileTo } from "./compile.ts";
import { readPeaks } from "./peak-rss-lines.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string" },
    projects: { type: "string", default: "2" },
    runs: { type: "string", default: "3" },
    embedded: { type: "boolean", default: false },
    "no-rollups": { type: "boolean", default: false },
    "rollups-cost": { type: "boolean", default: false },
    refetch: { type: "boolean", default: false },
    "cpu-prof": { type: "string" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("bench: set DATABASE_URL to a Postgres you can write to (schemas apm_bench_* are created and dropped)\n");
  process.exit(2);
}
const mode: BenchMode = values["rollups-cost"] ? "rollups-cost" : values.refetch ? "refetch" : values.embedded ? "embedded" : "copy";
const days = Number(values.days ?? (mode === "embedded" ? 2 : 8));
const runs = Number(values.runs);
const root = packageRoot();
const outDir = join(root, ".scratch-bench");
// Schemas of this bench process only: two benches on one server (two worktrees) must not drop each
// other's schema mid-run (a window then fails with "no partition of relation ... found for row").
const tag = `apm_bench_${process.pid}`;
// Yesterday midnight (UTC): every window is complete on the server clock.
const to = Math.floor(Date.now() / DAY) * DAY - DAY;
const from = to - days * DAY;

process.stdout.write(`bench: building the engine (tsc -> ${outDir}) ...\n`);
compileTo(outDir);

const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0", "--cache-replies"]);
const baseEnv: NodeJS.ProcessEnv = {
  ...process.env,
  ...sandbox.env,
  APM_RPS: "10000",
  APM_CONCURRENCY: "16",
  APM_LOG_LEVEL: process.env.APM_LOG_LEVEL ?? "warn",
};

/** Where each engine process writes its peak resident set at exit (jobs/peak-rss.mjs). */
const rssDir = mkdtempSync(join(tmpdir(), "apm-bench-rss-"));
let engines = 0;

function engine(env: NodeJS.ProcessEnv, compiled: boolean, rollups = !values["no-rollups"]): Promise<EngineRun> {
  const prof = compiled && values["cpu-prof"] ? ["--cpu-prof", "--cpu-prof-dir", values["cpu-prof"]] : [];
  const rssFile = join(rssDir, `${++engines}.txt`);
  // With the memory flags users run the CLI with (npm run cli), and the preload the memory tests read a child's peak with.
  const node = [...cliMemoryFlags(), ...prof, "--import", join(root, "jobs", "peak-rss.mjs")];
  const args = compiled
    ? [...node, join(outDir, "jobs", "bench-engine.js")]
    : [...node, "--import", "tsx", join(root, "jobs", "bench-engine.ts")];
  const flags = ["--from", String(from), "--to", String(to), ...(rollups ? [] : ["--no-rollups"])];
  const child = spawn(process.execPath, [...args, ...flags], {
    cwd: root,
    env: { ...env, PEAK_RSS_FILE: rssFile },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) return reject(new Error(`bench engine exited ${code}: ${out}`));
      try {
        resolve({ ...(JSON.parse(line) as Omit<EngineRun, "peakRssMiB">), peakRssMiB: peakMiB(rssFile) });
      } catch (e) {
        reject(new Error(`bench engine: no peak RSS in ${rssFile} (jobs/peak-rss.mjs preloaded?): ${String(e)}`));
      }
    });
  });
}

/** The peak resident set one engine process wrote at its exit (jobs/peak-rss.mjs), MiB. */
function peakMiB(file: string): number {
  const [peak] = readPeaks(file);
  if (!peak) throw new Error(`${file} is empty`);
  return Math.round(peak.kib / 1024);
}

const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
// Each timed phase starts from a checkpoint, so that it does not write out the dirty pages of the
// one before (the engine's rows, then the COPY's). It did not make the COPY steady: within one
// sitting its 527 k rows took 3.2-5.8 s either way, so --rollups-cost compares engine runs with
// each other, not with the COPY. Needs a superuser or pg_checkpoint; without, the phases run as
// they come.
const settle = () =>
  admin.unsafe("CHECKPOINT").catch((e: Error) => process.stdout.write(`  (no CHECKPOINT between phases: ${e.message})\n`));
/** A run into `schema`: a new one, or (`again`) the one a run filled, so that it fetches every window again. */
const pgRun = async (schema: string, compiled: boolean, { rollups, again = false }: { rollups?: boolean; again?: boolean } = {}) => {
  if (!again) await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await settle();
  const sb0 = cpuOf(sandbox.pid);
  const r = await engine({ ...baseEnv, DATABASE_URL: databaseUrl, APM_DB_SCHEMA: schema }, compiled, rollups);
  const sb1 = cpuOf(sandbox.pid);
  return { ...r, sandboxCpu: sb0 === null || sb1 === null ? null : sb1 - sb0 };
};
process.stdout.write(
  `bench: backfill of the 5 statistics for ${values.projects} project(s) x ${days} day(s), sandbox in its own process, no latency${mode === "rollups-cost" ? ", with and without rollups in pairs" : mode === "refetch" ? ", each run again over its own rows" : values["no-rollups"] ? ", rollups not kept" : ""}\n`,
);
const warm = await pgRun(`${tag}_warm`, false);
process.stdout.write(`${line("warm-up (tsx, fills the sandbox's reply cache)", warm)}\n`);
process.stdout.write(`  windows of a stream in flight (APM_WINDOW_CONCURRENCY): ${warm.windowConcurrency}\n`);
await admin.unsafe(`DROP SCHEMA IF EXISTS "${tag}_warm" CASCADE`);

/** What the compiled runs measured, for the summary (bench-report.ts). */
const samples: Samples = {
  rss: [],
  tsxRssMiB: warm.peakRssMiB,
  engineUs: [],
  mainUs: [],
  copyUs: [],
  copyServerUs: [],
  embeddedUs: [],
  embeddedRss: [],
  middleRatios: [],
  budgets: [],
  cpuRatios: [],
};
/** A compiled engine run into Postgres, counted for the summary. */
function counted(r: EngineRun): void {
  samples.rss.push(r.peakRssMiB);
  samples.engineUs.push(perRow(r.cpuSeconds, r.rows));
  if (r.mainThreadSeconds !== null) samples.mainUs.push(perRow(r.mainThreadSeconds, r.rows));
}
const rate = (r: EngineRun) => r.rows / r.seconds;

/** One run against a plain COPY of the same rows: engine rows/s over COPY rows/s. */
async function againstCopy(i: number): Promise<number> {
  const schema = `${tag}_${i}`;
  const r = await pgRun(schema, true);
  counted(r);
  await settle();
  const copy = await copySameRows(admin, databaseUrl!, schema);
  const ratio = rate(r) / (copy.rows / copy.seconds);
  if (r.shape !== null) samples.middleRatios.push(r.shape.middleRowsPerSecond / (copy.rows / copy.seconds));
  const server = copy.serverCpuSeconds === null ? null : perRow(copy.serverCpuSeconds, copy.rows);
  const budget = runBudget(r, copy.rows / copy.seconds);
  if (budget) samples.budgets.push(budget);
  samples.copyUs.push(perRow(copy.cpuSeconds, copy.rows));
  if (server !== null) samples.copyServerUs.push(server);
  process.stdout.write(
    `${line(`run ${i} engine`, r)}\n  run ${i} COPY:   ${copy.rows} rows in ${f(copy.seconds, 2)} s = ${Math.round(copy.rows / copy.seconds)} rows/s (client cpu ${f(perRow(copy.cpuSeconds, copy.rows))} us/row, server backend cpu ${server === null ? "?" : f(server)} us/row); ratio ${f(ratio, 3)}\n`,
  );
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  return ratio;
}

/** One run into the embedded database after one into Postgres: embedded time over Postgres time. */
async function againstPostgres(i: number): Promise<number> {
  const schema = `${tag}_${i}`;
  const r = await pgRun(schema, true);
  counted(r);
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  const dir = mkdtempSync(join(tmpdir(), "apm-bench-"));
  const env: NodeJS.ProcessEnv = { ...baseEnv, APM_DATA_DIR: dir };
  delete env.DATABASE_URL;
  const e = await engine(env, true);
  rmSync(dir, { recursive: true, force: true });
  samples.embeddedRss.push(e.peakRssMiB);
  samples.embeddedUs.push(perRow(e.cpuSeconds, e.rows));
  process.stdout.write(`${line(`run ${i} postgres`, r)}\n${line(`run ${i} embedded`, { ...e, sandboxCpu: null })}\n`);
  return e.seconds / r.seconds;
}

/**
 * A run with rollups and one without, back to back (the first of the pair alternates): rows/s with
 * over rows/s without. Adjacent runs share the machine's mood, so the pair's ratio is steadier than
 * two benches run apart.
 */
async function rollupsPair(i: number): Promise<number> {
  const order = i % 2 === 1 ? [true, false] : [false, true];
  const got = new Map<boolean, EngineRun>();
  for (const rollups of order) {
    const schema = `${tag}_${i}_${rollups ? "rollups" : "none"}`;
    const r = await pgRun(schema, true, { rollups });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    got.set(rollups, r);
    counted(r);
    process.stdout.write(`${line(`run ${i} ${rollups ? "with rollups   " : "without rollups"}`, r)}\n`);
  }
  const ratio = rate(got.get(true)!) / rate(got.get(false)!);
  // The same comparison by CPU (the engine's and its Postgres backends'), which the machine's
  // load moves less than wall time: without over with, like the rows/s ratio.
  const cpu = (r: EngineRun) => (r.serverCpuSeconds === null ? null : r.cpuSeconds + r.serverCpuSeconds);
  const [withCpu, withoutCpu] = [cpu(got.get(true)!), cpu(got.get(false)!)];
  const byCpu = withCpu === null || withoutCpu === null ? null : withoutCpu / withCpu;
  if (byCpu !== null) samples.cpuRatios.push(byCpu);
  process.stdout.write(`  run ${i}: with / without ${f(ratio, 3)}; by engine + server CPU ${byCpu === null ? "?" : f(byCpu, 3)}\n`);
  return ratio;
}

/**
 * A first run, then the same range again into the same schema: every window's rows are replaced,
 * their digests compared (a restatement is recorded where they differ), its ledger rows rewritten.
 * Refetch time over first-run time.
 */
async function refetchPair(i: number): Promise<number> {
  const schema = `${tag}_${i}`;
  const [first, again] = [await pgRun(schema, true), await pgRun(schema, true, { again: true })];
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  for (const r of [first, again]) {
    counted(r);
  }
  process.stdout.write(`${line(`run ${i} first  `, first)}\n${line(`run ${i} refetch`, again)}\n`);
  return again.seconds / first.seconds;
}

const measure = { copy: againstCopy, embedded: againstPostgres, "rollups-cost": rollupsPair, refetch: refetchPair }[mode];
const ratios: number[] = [];
for (let i = 1; i <= runs; i++) ratios.push(await measure(i));
sandbox.stop();
await admin.end();
rmSync(outDir, { recursive: true, force: true });
rmSync(rssDir, { recursive: true, force: true });
process.stdout.write(`${summaryLines(mode, ratios, samples).join("\n")}\n`);
