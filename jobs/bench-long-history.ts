// `npm run bench:long-history`: a first run from years back, as the README runs it (the `cli`
// script's node command, with its heap limit), against a sandbox process: `APM_START=2020-01-01`, every
// default stream of the sandbox's projects, into Postgres (DATABASE_URL) and into the embedded
// database. Each run goes on for --seconds, is stopped by SIGTERM, and is run again for a third of
// that. Prints per database: the windows written, windows/s, how long the stop took, the exit
// codes, the peak RSS (GNU time's %M), and the windows the second run added. Asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:long-history [-- --seconds 90 --projects 2]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { packageRoot } from "../src/util/package-root.ts";
import { cliMemoryFlags } from "./cli-flags.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "90" },
    projects: { type: "string", default: "2" },
    start: { type: "string", default: "2020-01-01" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !existsSync("/usr/bin/time")) {
  process.stderr.write("bench:long-history: needs DATABASE_URL (a Postgres you can write to) and GNU time (/usr/bin/time)\n");
  process.exit(2);
}
const seconds = Number(values.seconds);
const sandbox = await startSimulator(["--seed", "7", "--projects", values.projects!, "--burst-keys", "50"]);
const dir = mkdtempSync(join(tmpdir(), "apm-bench-long-"));
const schema = "apm_bench_long_history";

interface Stopped {
  readonly code: number | null;
  readonly stopS: number;
  readonly rssMiB: number;
}

// The `cli` script of package.json, whose node GNU time measures and the bench signals.
const CLI = ["node", ...cliMemoryFlags(), "--import", "tsx", "src/cli.ts"];

/** `sync` for `ms`, then SIGTERM to it; its exit code, how long it took to stop, its peak RSS. */
function syncFor(env: NodeJS.ProcessEnv, ms: number): Promise<Stopped> {
  const rss = join(dir, "rss.txt");
  const child = spawn("/usr/bin/time", ["-f", "%M", "-o", rss, ...CLI, "sync"], {
    cwd: packageRoot(),
    env,
    stdio: ["ignore", "ignore", "ignore"],
  });
  return new Promise((resolve) => {
    let signalled = 0;
    setTimeout(() => {
      signalled = performance.now();
      // The node under GNU time (time itself would die of the signal without writing its figure).
      const node = spawnSync("pgrep", ["-P", String(child.pid)], { encoding: "utf8" }).stdout.trim();
      if (node) process.kill(Number(node), "SIGTERM");
    }, ms);
    child.once("exit", (code) => {
      const kib = Number(readFileSync(rss, "utf8").trim().split("\n").at(-1));
      resolve({ code, stopS: (performance.now() - signalled) / 1000, rssMiB: kib / 1024 });
    });
  });
}

async function windowsIn(env: NodeJS.ProcessEnv): Promise<number> {
  const out = await new Promise<string>((resolve) => {
    const child = spawn(CLI[0]!, [...CLI.slice(1), "status", "--json"], { cwd: packageRoot(), env, stdio: ["ignore", "pipe", "ignore"] });
    let s = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      s += c;
    });
    child.once("close", () => resolve(s));
  });
  const model = JSON.parse(out) as { streams: { doneWindows: number }[] };
  return model.streams.reduce((n, s) => n + s.doneWindows, 0);
}

async function bench(label: string, env: NodeJS.ProcessEnv): Promise<string> {
  const first = await syncFor(env, seconds * 1000);
  const afterFirst = await windowsIn(env);
  const second = await syncFor(env, (seconds * 1000) / 3);
  const added = (await windowsIn(env)) - afterFirst;
  const rate = (afterFirst / seconds).toFixed(1);
  return (
    `${label.padEnd(9)} first run ${seconds} s: ${afterFirst} windows (${rate}/s), stop ${first.stopS.toFixed(1)} s, exit ${first.code}, peak RSS ${first.rssMiB.toFixed(0)} MiB; ` +
    `second run ${Math.round(seconds / 3)} s: +${added} windows, stop ${second.stopS.toFixed(1)} s, exit ${second.code}, peak RSS ${second.rssMiB.toFixed(0)} MiB`
  );
}

const base: NodeJS.ProcessEnv = { ...process.env, ...sandbox.env, APM_START: values.start, APM_RPS: "1000", APM_LOG_LEVEL: "warn" };
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
const lines: string[] = [];
try {
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  lines.push(await bench("postgres", { ...base, DATABASE_URL: databaseUrl, APM_DB_SCHEMA: schema }));
  const embedded: NodeJS.ProcessEnv = { ...base, APM_DATA_DIR: join(dir, "data") };
  delete embedded.DATABASE_URL;
  lines.push(await bench("embedded", embedded));
} finally {
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
  sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(
  `bench:long-history: APM_START=${values.start}, ${values.projects} project(s), every default stream\n${lines.join("\n")}\n`,
);
