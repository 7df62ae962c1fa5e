// What `--help` adds below commander's option list: the environment a command reads, an example,
// and its exit codes (README "Commands" and "Exit codes" say the same).
import type { Command } from "commander";

const API = "APM_BASE_URL, APM_PROJECTS (pcode:token,...), APM_ACCOUNT_TOKEN (each also as *_FILE), APM_TOKEN_HEADER, APM_PCODE_HEADER";
const DATABASE = "DATABASE_URL (unset: embedded database under APM_DATA_DIR, default .apm-sync), APM_DB_SCHEMA, APM_DB_CONNECTIONS";
const SELECTION = "APM_STREAMS";
const RATE = "APM_RPS, APM_CONCURRENCY, APM_TIMEOUT, APM_RETRIES";
const TRACES = "OTEL_EXPORTER_OTLP_ENDPOINT (traces over OTLP/HTTP; unset: none)";

const RUN_EXIT = [
  "0    every selected stream complete",
  "1    some window or stream failed (the others finished; `apm-sync status` names it; the next run retries it)",
  "2    configuration or usage error (nothing was requested)",
  "130  stopped by Ctrl-C (SIGINT), 143 by SIGTERM: windows in flight finished, the rest is left for the next run",
];
const READ_EXIT = [
  "0    done",
  "1    the database failed",
  "2    configuration or usage error (no warehouse at the configured place included)",
];

interface CommandHelp {
  readonly env: readonly string[];
  readonly example: string;
  readonly exit: readonly string[];
}

const HELP: Record<string, CommandHelp> = {
  sync: {
    env: [API, DATABASE, SELECTION, "APM_START (first run; default 7d)", RATE, TRACES],
    example: "apm-sync sync --streams stat,range --projects 1234",
    exit: RUN_EXIT,
  },
  backfill: {
    env: [API, DATABASE, SELECTION, RATE, TRACES],
    example: "apm-sync backfill --from 2026-01-01 --to 2026-02-01   (or --from 2d --to now)",
    exit: RUN_EXIT,
  },
  verify: {
    env: [API, DATABASE, SELECTION, RATE],
    example: "apm-sync verify --from 2026-01-01 --to 2026-02-01 --sample 50",
    exit: [
      "0    every window checked agrees with the server (or none is held done in the range)",
      "1    some window differs or could not be fetched (each is named; nothing was changed), or the database failed",
      "2    configuration or usage error (nothing was requested)",
      "130  stopped by Ctrl-C (SIGINT), 143 by SIGTERM",
    ],
  },
  check: {
    env: [API, SELECTION, RATE],
    example: "apm-sync check --json",
    exit: ["0    every probe ok or skipped", "1    some probe failed", "2    configuration or usage error (nothing was requested)"],
  },
  status: { env: [DATABASE], example: "apm-sync status --json", exit: READ_EXIT },
  report: { env: [DATABASE], example: "apm-sync report --from 7d --out coverage.html", exit: READ_EXIT },
  migrate: { env: [DATABASE], example: "DATABASE_URL=postgres://etl@warehouse/analytics apm-sync migrate", exit: READ_EXIT },
  prune: {
    env: [
      DATABASE,
      "APM_RETENTION (e.g. stat=400d,range=90d,points=30d; unset: keep everything)",
      "APM_ARCHIVE (a directory: each partition is written there as Parquet, read back and checked before it is dropped)",
    ],
    example: "APM_RETENTION=stat=400d,points=30d apm-sync prune --dry-run",
    exit: [
      "0    pruned (with --dry-run: shown), or no retention set",
      "1    a table was held by a query past the lock timeout, or its archive could not be written and checked (nothing of it changed: prune again), or the database failed",
      "2    configuration or usage error (no warehouse at the configured place included)",
    ],
  },
  restore: {
    env: [DATABASE, "APM_ARCHIVE (the directory prune archived the months to)"],
    example: "APM_ARCHIVE=/mnt/archive apm-sync restore --months 2025-01,2025-02 --streams stat",
    exit: [
      "0    restored: the months' rows are back, their ledger windows done, the rollups refreshed",
      "1    the database failed (a month's transaction rolled back: what was restored before it stays)",
      "2    configuration or usage error; a month not archived, already holding rows, or its file missing or changed (nothing written)",
    ],
  },
  transfer: {
    env: ["APM_DATA_DIR (the embedded warehouse to copy), APM_DB_SCHEMA (both sides); DATABASE_URL must be unset"],
    example: "apm-sync transfer --to postgres://etl@warehouse/analytics",
    exit: [
      "0    copied, every table's row count equal on both sides",
      "1    the copy or a database failed (the target's transaction rolled back: nothing of the copy stays)",
      "2    configuration or usage error; the target already holds data (nothing was written)",
    ],
  },
  streams: { env: [], example: "apm-sync streams --json", exit: ["0    always"] },
  schema: {
    env: ["with --dbt: APM_DB_SCHEMA, APM_GRAIN, APM_SETTLE (file key grains too)"],
    example: "apm-sync schema --markdown > docs/warehouse.md   (or --dbt > models/apm_sources.yml)",
    exit: ["0    printed", "2    usage or configuration error"],
  },
  reset: {
    env: [DATABASE],
    example: "apm-sync reset --streams stat.sql --projects 1234 --from 2026-01-01 --to 2026-01-02 --drop-rows",
    exit: [
      "0    forgotten (or, with --dry-run, shown)",
      "1    another run was writing a stream (that one is untouched: run reset again), or the database failed",
      "2    configuration or usage error (nothing was changed)",
    ],
  },
  worker: {
    env: [API, "DATABASE_URL (a Postgres server)", "APM_SCHEDULE", "APM_WORKER_RECOVERY", RATE, TRACES],
    example: "apm-sync worker --concurrency 4",
    exit: [
      "0    stopped, or idle with --until-idle",
      "1    some job failed for good",
      "2    configuration or usage error",
      "143  stopped by SIGTERM",
    ],
  },
  enqueue: {
    env: [API, "DATABASE_URL (a Postgres server)"],
    example: "apm-sync enqueue backfill --from 2025-01-01 --to 2026-01-01",
    exit: [
      "0    queued (jobs added, already queued, and chunks the ledger has complete are counted)",
      "1    the database failed",
      "2    configuration or usage error (no DATABASE_URL included; nothing was queued)",
    ],
  },
  simulate: {
    env: ["APM_TOKEN_HEADER, APM_PCODE_HEADER"],
    example: "apm-sync simulate --port 8181 --seed 7",
    exit: ["0    stopped by Ctrl-C", "2    usage error"],
  },
  demo: { env: [], example: "npm run -s demo -- --json", exit: RUN_EXIT },
};

function helpText(h: CommandHelp): string {
  const env = h.env.length > 0 ? ["", 'Environment (README "Configuration" lists every setting):', ...h.env.map((e) => `  ${e}`)] : [];
  return [...env, "", "Example:", `  ${h.example}`, "", "Exit codes:", ...h.exit.map((e) => `  ${e}`)].join("\n");
}

const MAIN = `
Environment (every setting also in a JSON file: --config FILE or APM_CONFIG; variables win):
  ${API}
  ${DATABASE}
  APM_STREAMS, APM_START, APM_GRAIN, APM_LOOKBACK, APM_SETTLE, ${RATE}
  APM_LOG_LEVEL, APM_LOG_FORMAT (pretty | json | plain)

Example:
  export APM_BASE_URL=https://api.example.com APM_PROJECTS=1234:ptoken APM_ACCOUNT_TOKEN=...
  apm-sync check && apm-sync sync && apm-sync status

Exit codes:
${RUN_EXIT.map((e) => `  ${e}`).join("\n")}`;

/** Adds the environment, an example and the exit codes to the help of `program`, each command and subcommand. */
export function addHelpTexts(program: Command): void {
  program.addHelpText("after", MAIN);
  for (const command of program.commands) {
    const help = HELP[command.name()];
    if (!help) continue;
    // `enqueue backfill --help` says what `enqueue --help` says.
    for (const c of [command, ...command.commands]) c.addHelpText("after", `\n${helpText(help).trimStart()}`);
  }
}
