// `npm run bench:workers`: wall time of the same queued backfill run by 1 and by 3 worker
// processes against a sandbox that answers every request after 100 ms (the latency of a real
// service). Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:workers [-- --days 2 --projects 2 --concurrency 2 --window-concurrency 1]
// One window at a time per job by default, so that a job waits on the API's latency as it would
// on a rate-limited real service; on this 2-core machine a CPU-bound run (sandbox, engine and
// Postgres share the cores) cannot show what more workers buy.
// Each worker is its own process with its own rate governor; APM_RPS is set high so that the
// latency, not the governor, is what the workers share out (see docs/operating.md, "Scaling out").
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { DAY } from "../src/catalogue/types.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "2" },
    projects: { type: "string", default: "2" },
    concurrency: { type: "string", default: "2" },
    "window-concurrency": { type: "string", default: "1" },
    workers: { type: "string", default: "1,3" },
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
const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0", "--latency-ms", "100..100"]);
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "cli.ts"), ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.resume();
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, out })));
}

const results: { workers: number; seconds: number; jobs: string }[] = [];
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
  const queued = await cli(["enqueue", "backfill", ...range], env);
  const t0 = performance.now();
  const exits = await Promise.all(
    Array.from({ length: n }, () => cli(["worker", "--until-idle", "--concurrency", values.concurrency!], env)),
  );
  const seconds = (performance.now() - t0) / 1000;
  const bad = exits.filter((e) => e.code !== 0).length;
  results.push({ workers: n, seconds, jobs: queued.out.trim() });
  process.stdout.write(
    `${n} worker(s) x concurrency ${values.concurrency}, ${values["window-concurrency"]} window(s) at once per job: ${seconds.toFixed(1)} s${bad ? ` (${bad} exited non-zero)` : ""}; ${queued.out.trim()}\n`,
  );
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
}
sandbox.stop();
await admin.end();
const [one, ...rest] = results;
for (const r of rest)
  if (one) process.stdout.write(`speed-up of ${r.workers} workers over ${one.workers}: ${(one.seconds / r.seconds).toFixed(2)}x\n`);
