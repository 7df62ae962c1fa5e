// `npm run bench:refresh`: the rollups' refresh after a long backfill against the fetch it follows
// (issue 38): a backfill of --base-days, an ANALYZE of the warehouse (statistics taken while the
// tables hold only those days), then a backfill of --days more, each through the real CLI against a
// sandbox process; prints each run's fetch and refresh seconds. Prints numbers; asserts nothing.
//   DATABASE_URL=postgres://... npm run bench:refresh [-- --base-days 30 --days 120 --projects 2 --streams stat.transaction]
//   --no-analyze: the same without the ANALYZE between the two backfills.
// Fetch seconds: from the command's start to the start of its refresh at the end; refresh seconds:
// as the run logs them ("rollups refreshed: ... in N s"), 0 when it left nothing to refresh (the
// refresh along the fetch took every day); and the days refreshed along the fetch.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { DAY } from "../src/catalogue/types.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    "base-days": { type: "string", default: "30" },
    days: { type: "string", default: "120" },
    projects: { type: "string", default: "2" },
    streams: { type: "string", default: "stat.transaction" },
    "no-analyze": { type: "boolean", default: false },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write(
    "bench:refresh: set DATABASE_URL to a Postgres you can write to (schema apm_bench_refresh is created and dropped)\n",
  );
  process.exit(2);
}
const SCHEMA = "apm_bench_refresh";
const root = packageRoot();
const baseDays = Number(values["base-days"]);
const days = Number(values.days);
// Yesterday midnight (UTC): every window is complete on the server clock. The base days are the
// latest ones (a first sync's), the backfill goes back from there.
const to = Math.floor(Date.now() / DAY) * DAY - DAY;
const iso = (ms: number) => new Date(ms).toISOString();

const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects!, "--burst-keys", "0"]);
const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ...sandbox.env,
  DATABASE_URL: databaseUrl,
  APM_DB_SCHEMA: SCHEMA,
  APM_RPS: "10000",
  APM_CONCURRENCY: "16",
  APM_WINDOW_CONCURRENCY: "4",
  // debug: the end refresh's line also when it had less than a week of hours left (info from a week),
  // and the days refreshed along the fetch.
  APM_LOG_LEVEL: "debug",
  APM_LOG_FORMAT: "json",
};

interface Backfill {
  code: number | null;
  fetchSeconds: number;
  /** The end refresh's seconds; 0 when it found nothing left to refresh; null when the run logged none and failed. */
  refreshSeconds: number | null;
  /** Days refreshed along the fetch (a server database only). */
  alongDays: number;
  rows: number;
  windows: number;
}

/** `apm-sync backfill` of [from, to) as the README runs it; its JSON log lines give the timings. */
function backfill(from: number, until: number): Promise<Backfill> {
  const args = ["backfill", "--from", iso(from), "--to", iso(until), "--streams", values.streams!];
  const started = Date.now();
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "cli.ts"), ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const take = (c: string) => {
    out += c;
  };
  child.stdout.setEncoding("utf8").on("data", take);
  child.stderr.setEncoding("utf8").on("data", take);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      const records = out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const first = (re: RegExp) => records.find((r) => re.test(String(r.msg)));
      // The end refresh logs when it begins (a week of hours or more) and what it did (when it did anything).
      const refreshed = first(/^rollups refreshed: /);
      const refreshSeconds = refreshed ? Number(refreshed.seconds) : code === 0 ? 0 : null;
      // Its line is written when it ends: the fetch ended its length before.
      // Without one, the fetch ended with the run's last line, not when its process did.
      const fetchEnd = refreshed ? Number(refreshed.time) - Number(refreshed.seconds) * 1000 : Number(records.at(-1)?.time ?? Date.now());
      const along = records.filter((r) => /^rollups refreshed along the fetch/.test(String(r.msg)));
      const summaries = records.filter((r) => r.msg === "stream summary");
      resolve({
        code,
        fetchSeconds: (fetchEnd - started) / 1000,
        refreshSeconds,
        alongDays: along.reduce((n, r) => n + Number(r.days), 0),
        rows: summaries.reduce((n, r) => n + Number(r.rows), 0),
        windows: summaries.reduce((n, r) => n + Number(r.windows), 0),
      });
    });
  });
}

/** ANALYZE of every table of the warehouse's schema, as a database-wide ANALYZE would do. */
async function analyze(): Promise<void> {
  const tables = await admin<{ name: string }[]>`
    SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${SCHEMA} AND c.relkind IN ('r', 'p')`;
  for (const t of tables) await admin.unsafe(`ANALYZE ${t.name}`);
}

const line = (label: string, r: Backfill) => {
  const refresh =
    r.refreshSeconds === null
      ? "refresh ?"
      : `refresh at the end ${r.refreshSeconds.toFixed(1)} s (refresh / fetch ${(r.refreshSeconds / r.fetchSeconds).toFixed(3)})`;
  return `  ${label}: ${r.windows} windows, ${r.rows} rows; fetch ${r.fetchSeconds.toFixed(1)} s (${r.alongDays} day(s) of rollups refreshed along it), ${refresh}, exit ${r.code}`;
};

process.stdout.write(
  `bench:refresh: ${values.streams} for ${values.projects} project(s): ${baseDays} days, ${values["no-analyze"] ? "no ANALYZE" : "ANALYZE"}, then ${days} days before them\n`,
);
await admin.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
const base = await backfill(to - baseDays * DAY, to);
process.stdout.write(`${line(`first backfill (${baseDays} days)`, base)}\n`);
if (!values["no-analyze"]) await analyze();
const more = await backfill(to - (baseDays + days) * DAY, to - baseDays * DAY);
process.stdout.write(`${line(`then ${days} days`, more)}\n`);
sandbox.stop();
await admin.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
await admin.end();
