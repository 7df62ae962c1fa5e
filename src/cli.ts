// Command-line front: parses arguments with commander and hands over to the thin jobs in ../jobs.
// Every usage problem (unknown command or flag, a missing required flag, a bare `enqueue`) exits 2,
// with commander's own "did you mean"; --help and --version exit 0.
import { type Command, CommanderError, Option } from "commander";
import { UsageCommand } from "./cli-command.ts";
import { addHelpTexts } from "./cli-help.ts";
import { ConfigError, requestedLogFormat } from "./config.ts";
import { printProblem, UsageError } from "./usage-error.ts";
import { letOldGenerationDouble } from "./util/heap-growth.ts";
import { packageVersion } from "./util/package-root.ts";

// Before any work: the old generation doubles between full collections (util/heap-growth.ts).
letOldGenerationDouble();

// Known before parsing, so that a scheduler that asked for JSON gets usage errors as JSON too.
const format = requestedLogFormat(logFormatArgument(process.argv));

const program = new UsageCommand()
  .name("apm-sync")
  .description("Copy application-monitoring Open API data into Postgres, incrementally.")
  .version(packageVersion(), "-V, --version", "print the version")
  .option("--config <file>", "JSON config file (env APM_CONFIG)")
  .addOption(new Option("--log-format <format>", "log output (env APM_LOG_FORMAT)").choices(["pretty", "json", "plain"]))
  .exitOverride()
  .showHelpAfterError("(add --help for usage)")
  // Missing required options are said with every other problem of the line (cli-command.ts).
  .hook("preAction", (_program, action) => (action as UsageCommand).failOnProblems());
if (format === "json") {
  // Errors, and the help a bare `enqueue` shows, as one JSON line each.
  const asJson = (text: string) => printProblem(new UsageError(text.replace(/^error: /, "").trim()), format);
  program.showHelpAfterError(false).configureOutput({ writeErr: asJson, outputError: asJson });
}

type Action = (opts: Record<string, unknown>, global: Record<string, unknown>) => Promise<number>;

function job(load: () => Promise<{ run: Action }>) {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const { run } = await load();
    process.exitCode = await run(cmd.opts(), program.opts());
  };
}

program
  .command("streams")
  .description("print the operation catalogue: operation, token, limit, target")
  .option("--json", "machine-readable")
  .action(job(() => import("../jobs/streams.ts")));

program
  .command("schema")
  .description("print the data dictionary: every table, view and column of the warehouse")
  .option("--markdown", "as Markdown (docs/warehouse.md)")
  .option("--json", "machine-readable")
  .option("--dbt", "as a dbt sources.yml (descriptions, freshness of the windowed tables; reads APM_DB_SCHEMA and the grains)")
  .action(job(() => import("../jobs/schema.ts")));

program
  .command("simulate")
  .description("run the sandbox Open API server")
  .option("--port <n>", "port (0 = any free port)", "8181")
  .option("--host <host>", "address to listen on", "127.0.0.1")
  .option("--seed <s>", "data seed", "1")
  .option("--projects <n>", "number of projects", "3")
  .option("--max-records <n>", "record cap of aggregated statistics", "10000")
  .option("--latency-ms <a..b>", "injected latency range")
  .option("--fault-rate <r>", "fraction of requests answered with a fault", "0")
  .option("--faults <kinds>", "comma list of fault kinds")
  .option("--rate-limit <rps>", "token-bucket rate limit answering 429")
  .option("--burst-keys <n>", "distinct keys of each project-day's burst cube (0 = none)", "12000")
  .option("--range-token <kind>", "token the range and series operations accept: project | account | both", "project")
  .option("--groups-path <v>", "groups list path: v1 (/open/api/json/groups) | v2 (/open/api/v2/json/groups)", "v1")
  .option("--event-agent-param <name>", "agent filter of event history: oid | oids", "oids")
  .option("--stats <mode>", "aggregated statistics at the default path: served | not-found", "served")
  .option("--clock-offset <d>", "server clock minus real clock, e.g. -3h", "0")
  .option("--framing <kind>", "answers' bodies framed by: length (Content-Length) | chunked (transfer encoding)", "length")
  .option("--connection <mode>", "a connection after its answer: keep-alive (reused) | close (Connection: close, closed)", "keep-alive")
  .option("--cache-replies", "bench mode: answer a repeated request from memory")
  .option("--hostile <modes>", 'lie and misbehave like a broken server: comma list of modes (docs/development.md, "Sandbox")')
  .option("--hostile-ops <ids>", "operations the hostile modes apply to (stat.* prefixes; probe = the clock probe)")
  .option("--hostile-rate <r>", "fraction of those requests that get them", "1")
  .option("--retry-after <s>", "seconds of the retry-after hostile modes", "120")
  .option("--trickle-ms <ms>", "interval between the bytes of a trickling body", "1000")
  .action(job(() => import("../jobs/simulate.ts")));

program
  .command("migrate")
  .description("apply database migrations (a second run is a no-op)")
  .action(job(() => import("../jobs/migrate.ts")));

const selection = (c: Command) =>
  c
    .option("--streams <ids>", "comma list of stream ids (see `apm-sync streams`)")
    .option("--projects <pcodes>", "comma list of project codes");

selection(program.command("sync").description("incremental catch-up of every selected stream up to now - settle")).action(
  job(() => import("../jobs/sync.ts")),
);

selection(program.command("backfill").description("fill a time range; idempotent and resumable"))
  .requiredOption("--from <time>", "range start (ISO time, UTC unless a zone is given)")
  .requiredOption("--to <time>", "range end (exclusive)")
  .option("--refetch", "also fetch the windows the ledger has complete (their rows are replaced); default: skip them")
  .option("--dry-run", "print the window plan and request count, send nothing")
  .action(job(() => import("../jobs/backfill.ts")));

selection(
  program
    .command("verify")
    .description("fetch the windows the ledger has done again and compare them with the stored rows; change nothing"),
)
  .requiredOption("--from <time>", "range start (ISO time, UTC unless a zone is given)")
  .requiredOption("--to <time>", "range end (exclusive)")
  .option("--sample <n>", "verify n of the done windows, spread evenly over them (default: all)")
  .action(job(() => import("../jobs/verify.ts")));

selection(program.command("check").description("one probe per operation and project: what works, which token, the server's clock"))
  .option("--json", "machine-readable")
  .action(job(() => import("../jobs/check.ts")));

const enqueue = program.command("enqueue").description("scale-out: put work on the job queue in the warehouse Postgres (run `worker`s)");
selection(enqueue.command("backfill").description("queue a backfill: one job per stream, project, partition and chunk"))
  .requiredOption("--from <time>", "range start (ISO time, UTC unless a zone is given)")
  .requiredOption("--to <time>", "range end (exclusive)")
  .option("--chunk <duration>", "time range of one job (whole grain windows)", "1d")
  .option("--refetch", "also queue chunks the ledger has complete (a backfill replaces their rows)")
  .action(job(() => import("../jobs/enqueue.ts").then((m) => ({ run: m.runBackfill }))));
selection(enqueue.command("sync").description("queue a sync: one job per stream, project and partition")).action(
  job(() => import("../jobs/enqueue.ts").then((m) => ({ run: m.runSync }))),
);

program
  .command("worker")
  .description("run queued jobs (and the APM_SCHEDULE sync) until stopped")
  .option("--concurrency <n>", "jobs run at once by this process", "2")
  .option("--until-idle", "exit once nothing is queued, running or waiting for recovery (1 if jobs failed for good)")
  .action(job(() => import("../jobs/worker.ts")));

selection(program.command("reset").description("forget windows so that the next sync or backfill fetches them again"))
  .option("--from <time>", "forget windows overlapping [from, to) (ISO time, UTC unless a zone is given; default: unbounded)")
  .option("--to <time>", "range end (exclusive)")
  .option("--drop-rows", "also delete the rows of those windows (windowed aggregates), in the same transaction")
  .option("--dry-run", "print what would be forgotten, change nothing")
  .action(job(() => import("../jobs/reset.ts")));

program
  .command("prune")
  .description("drop the monthly partitions older than the retention (APM_RETENTION); print what went")
  .option("--dry-run", "print what would be dropped, change nothing")
  .action(job(() => import("../jobs/prune.ts")));

program
  .command("restore")
  .description("load months prune archived to Parquet (APM_ARCHIVE) back into the warehouse")
  .requiredOption("--months <list>", "months as YYYY-MM, comma-separated (e.g. 2026-03,2026-04)")
  .option("--streams <list>", "only the tables of these streams (ids or prefixes; default: every archived table)")
  .action(job(() => import("../jobs/restore.ts")));

program
  .command("transfer")
  .description("copy the embedded warehouse (APM_DATA_DIR) into an empty Postgres warehouse, then check the counts")
  .requiredOption("--to <url>", "the target Postgres (postgres://...); migrated first, must hold no data")
  .action(job(() => import("../jobs/transfer.ts")));

program
  .command("status")
  .description("per project and stream: watermark, lag, last run, failed/truncated windows")
  .option("--json", "machine-readable")
  .action(job(() => import("../jobs/status.ts")));

program
  .command("report")
  .description("coverage, freshness and the data on one self-contained HTML page")
  .option("--out <file>", "where to write the page (default apm-sync-report.html; with --json: the JSON, default stdout)")
  .option("--json", "the same figures as JSON")
  .option("--from <time>", "range start (ISO time, UTC unless a zone is given; default: the ledger's span)")
  .option("--to <time>", "range end (exclusive)")
  .option("--projects <pcodes>", "comma list of project codes")
  .action(job(() => import("../jobs/report.ts")));

program
  .command("demo")
  .description("sandbox + embedded database + a real sync + a short report")
  .option("--json", "print the report as JSON")
  .option("--data-dir <dir>", "where the embedded database lives", ".apm-sync")
  .action(job(() => import("../jobs/demo.ts")));

addHelpTexts(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exitCode = e.exitCode === 0 ? 0 : 2;
  else if (e instanceof ConfigError || e instanceof UsageError) {
    printProblem(e, format);
    process.exitCode = 2;
  } else {
    process.stderr.write(`apm-sync: ${(e as Error).message}\n`);
    process.exitCode = 1;
  }
}

/** The value of `--log-format X` / `--log-format=X` in `argv`, if any. */
function logFormatArgument(argv: readonly string[]): string | undefined {
  const i = argv.findIndex((a) => a === "--log-format" || a.startsWith("--log-format="));
  if (i < 0) return undefined;
  const arg = argv[i]!;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : argv[i + 1];
}
