// `npm run bench:memory`: the peak RSS of each README command, run as the README runs it
// (`npm run -s cli -- ...`, with the script's heap limit), against a sandbox process with 2
// projects and 7 days of history, into Postgres (DATABASE_URL) and into the embedded database.
// Peak RSS is the kernel's maximum resident set of the command's largest process (GNU time's %M:
// the command's node, not npm), so it counts the JavaScript heap, the driver's buffers and,
// embedded, PGlite's WebAssembly memory.
// Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:memory [-- --days 7 --projects 2 --limit-mib 256]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { packageRoot } from "../src/util/package-root.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "7" },
    projects: { type: "string", default: "2" },
    "limit-mib": { type: "string", default: "256" },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !existsSync("/usr/bin/time")) {
  process.stderr.write("bench:memory: needs DATABASE_URL (a Postgres you can write to) and GNU time (/usr/bin/time)\n");
  process.exit(2);
}
const root = packageRoot();
const limit = Number(values["limit-mib"]);
const schema = "apm_bench_memory";
const sandbox = await startSimulator(["--seed", "7", "--projects", values.projects!, "--burst-keys", "0"]);
const dataDir = mkdtempSync(join(tmpdir(), "apm-bench-memory-"));
const base: NodeJS.ProcessEnv = {
  ...process.env,
  ...sandbox.env,
  APM_ACCOUNT_TOKEN: sandbox.accountToken,
  APM_START: `${values.days}d`,
  APM_RPS: "1000",
  APM_LOG_LEVEL: "warn",
};
const report = join(dataDir, "report.html");

/** The README's commands, in the order a user runs them. */
const COMMANDS: readonly string[][] = [
  ["migrate"],
  ["check"],
  ["sync"],
  ["sync"],
  ["status"],
  ["report", "--out", report],
  ["prune", "--dry-run"],
  ["schema", "--markdown"],
  ["streams"],
];

interface Measured {
  readonly command: string;
  readonly code: number | null;
  readonly peakMiB: number;
  readonly seconds: number;
}

function measure(args: readonly string[], env: NodeJS.ProcessEnv): Measured {
  const started = Date.now();
  const r = spawnSync("/usr/bin/time", ["-f", "apm-bench-maxrss-kb %M", "npm", "run", "-s", "cli", "--", ...args], {
    cwd: root,
    env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const kb = Number(/apm-bench-maxrss-kb (\d+)/.exec(r.stderr)?.[1] ?? Number.NaN);
  return {
    command: args.join(" ").replace(report, "FILE"),
    code: r.status,
    peakMiB: Math.round(kb / 1024),
    seconds: (Date.now() - started) / 1000,
  };
}

const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
// migrate makes the job queue's schema beside the warehouse's (jobs/migrate.ts).
const dropSchemas = () => admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_queue" CASCADE`);
await dropSchemas();
const targets: [string, NodeJS.ProcessEnv][] = [
  ["postgres", { ...base, DATABASE_URL: databaseUrl, APM_DB_SCHEMA: schema }],
  ["embedded", { ...base, DATABASE_URL: "", APM_DATA_DIR: join(dataDir, "db") }],
];
process.stdout.write(
  `bench:memory: ${values.projects} project(s) x ${values.days} day(s) of the sandbox; peak RSS per command (limit ${limit} MiB)\n`,
);
let over = 0;
for (const [name, env] of targets) {
  for (const args of COMMANDS) {
    const m = measure(args, env);
    const flag = m.peakMiB > limit ? "  OVER" : "";
    if (flag) over += 1;
    process.stdout.write(
      `  ${name.padEnd(9)} ${m.command.padEnd(22)} exit ${m.code}  ${String(m.peakMiB).padStart(4)} MiB  ${m.seconds.toFixed(1)} s${flag}\n`,
    );
  }
}
process.stdout.write(`bench:memory: ${over} command(s) over ${limit} MiB\n`);
await dropSchemas();
await admin.end();
sandbox.stop();
rmSync(dataDir, { recursive: true, force: true });
