// Bookkeeping: runs, the window ledger, watermarks, verifications, archives, quarantined records and
// queue workers (docs/design.md "Ledger and watermarks"). Each column is declared once, with what it
// means (src/kernel/declare.ts `local`: apm-sync's own data, no API field); the tables and the
// dictionary's entries come from the declarations.
import { sql } from "drizzle-orm";
import { bigserial, check, index, integer, jsonb, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";
import { columns, local, tableOf } from "../../kernel/declare.ts";
import type { DeclaredDoc, DocGroup } from "../../kernel/docs.ts";
import { i64, ts } from "../../kernel/sql-types.ts";
import { docEntry, ledgerWindow } from "../../kernel/tables.ts";
import { GONE_STATUSES, KEPT_STATUSES, WINDOW_STATUSES } from "../../windows/types.ts";

/** Constant strings as an SQL list of literals (a check's IN list). */
const sqlList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(", "));
const rowId = (text = "Row id.") => local(() => bigserial({ mode: "number" }).primaryKey(), text);
const count = (text: string) => local(() => integer().notNull().default(0), { text, unit: "count" });
const bigCount = (text: string) => local(() => i64().notNull().default(0), { text, unit: "count" });
const writtenAt = (text: string) => local(() => ts().notNull().defaultNow(), text);

const syncRunColumns = columns({
  id: rowId("Run id; the run_id of the rows and ledger entries it wrote."),
  command: local(() => text().notNull(), "sync, backfill, worker or schedule."),
  args: local(() => jsonb().notNull().default({}), "The command's arguments (stream and project selection, range...); never a token."),
  version: local(() => text(), "apm-sync version that ran it."),
  started_at: writtenAt("When the run started."),
  finished_at: local(ts, "When the run finished; null while it runs (or if it died before a later run marked it interrupted)."),
  status: local(
    () => text().notNull().default("running"),
    "running, ok (every selected stream complete), partial (some window or stream failed), failed (the run itself " +
      "stopped on an error), cancelled (stopped by a signal) or interrupted (the process died; marked by the next run).",
  ),
  counts: local(
    () => jsonb().notNull().default({}),
    "Per stream: windows, rows, requests, retries, splits, truncated and quarantined counts; a run that failed says why under the key error (text).",
  ),
});

/** One row per invocation. `args` never holds secrets. */
export const syncRuns = pgTable("sync_runs", tableOf(syncRunColumns));

const syncWindowColumns = columns({
  id: rowId(),
  ...ledgerWindow("Start (inclusive) of the window, UTC; the capture time for snapshot streams."),
  status: local(
    () => text().notNull(),
    "done, failed (retried by the next run), truncated (a 5-minute window still cut by the record cap: stored as it came) " +
      "pruned (its rows were dropped with their monthly partitions by `apm-sync prune`, the retention: accounted for, never " +
      "fetched again) or archived (the same, the rows written first to Parquet under APM_ARCHIVE: see the archives table; " +
      "`apm-sync restore` gives them back the status of gone_from).",
  ),
  expected_total: local(i64, {
    text: "Records the server said exist (total) where the response carries a count (statistics, range records); null otherwise.",
    unit: "count",
  }),
  rows_fetched: bigCount("Records the response(s) held."),
  rows_written: bigCount("Rows written to the stream's table."),
  requests: count("HTTP requests made for the window, retries and splits included (a split's are all counted on its first part)."),
  retries: count("Requests that were retries."),
  splits: count("Times the window was halved because the record cap cut it."),
  quarantined: count("Records quarantined (failed validation, or repeated a natural key)."),
  error: local(() => text(), "Why a failed window failed (never a token)."),
  gone_from: local(
    () => text(),
    "The status a pruned or archived window had before (done, failed or truncated): `apm-sync restore` gives it back. " +
      "Null otherwise, and for windows pruned or archived before it was kept (restored as done).",
  ),
  run_id: local(i64, "The run (sync_runs.id) that recorded the window last."),
  started_at: writtenAt("When the window's fetch started."),
  finished_at: local(ts, "When the window was recorded."),
});

/** The ledger: one row per (stream, pcode, partition, window); re-fetching a window updates its row. */
export const syncWindows = pgTable("sync_windows", tableOf(syncWindowColumns), (t) => [
  unique("sync_windows_window_key").on(t.stream, t.pcode, t.partition, t.window_start, t.window_end),
  // The windows that are not done (status, report, the problem lists ask for those): partial, so
  // it stays small and never competes with the window key for reads of done windows (coverage).
  index("sync_windows_status_idx").on(t.stream, t.pcode, t.status).where(sql`${t.status} <> 'done'`),
  check("sync_windows_status_check", sql`${t.status} in (${sqlList(WINDOW_STATUSES)})`),
  check("sync_windows_gone_from_check", sql`${t.gone_from} in (${sqlList(KEPT_STATUSES)})`),
  // Only a gone window remembers what it was: one fetched again or restored has it cleared.
  check("sync_windows_gone_from_only_gone", sql`${t.gone_from} is null or ${t.status} in (${sqlList(GONE_STATUSES)})`),
]);

const syncAttemptColumns = columns({
  ...ledgerWindow(),
  run_id: local(i64, "The run fetching it now; null once the crash of the run that left it was counted."),
  crashes: count("Runs that died while the window was in flight."),
  updated_at: writtenAt("When the row was last written."),
});

/** Windows in flight (src/db/ledger/windowsInFlight.ts). */
export const syncAttempts = pgTable("sync_attempts", tableOf(syncAttemptColumns), (t) => [
  primaryKey({ columns: [t.stream, t.pcode, t.partition, t.window_start, t.window_end] }),
]);

const { stream, pcode, partition } = ledgerWindow();
const watermarkColumns = columns({
  stream,
  pcode,
  partition,
  watermark: local(() => ts().notNull(), "Everything before this time is fetched (UTC)."),
  updated_at: writtenAt("When the watermark last moved."),
});

/** End of the first unbroken run of done windows; only ever moves forward. */
export const watermarks = pgTable("watermarks", tableOf(watermarkColumns), (t) => [
  primaryKey({ columns: [t.stream, t.pcode, t.partition] }),
]);

const verificationColumns = columns({
  id: rowId(),
  range_start: local(() => ts().notNull(), "Start (inclusive) of the range verified, UTC."),
  range_end: local(() => ts().notNull(), "End (exclusive) of the range verified, UTC."),
  args: local(
    () => jsonb().notNull().default({}),
    "The selection: streams, projects and sample (null: every done window of the range); never a token.",
  ),
  windows_checked: local(() => integer().notNull(), { text: "Done windows fetched again and compared.", unit: "count" }),
  windows_differing: local(() => integer().notNull(), {
    text: "Of those, windows whose served rows differ from the stored ones.",
    unit: "count",
  }),
  windows_failed: local(() => integer().notNull(), { text: "Windows that could not be fetched again (not compared).", unit: "count" }),
  started_at: local(() => ts().notNull(), "When the verification started."),
  finished_at: writtenAt("When it finished."),
});

/** One row per `apm-sync verify`. */
export const verifications = pgTable("verifications", tableOf(verificationColumns), (t) => [
  index("verifications_finished_idx").on(t.finished_at),
]);

const archiveColumns = columns({
  table_name: local(() => text().notNull(), "The warehouse table the partition belonged to."),
  month: local(() => ts().notNull(), "First instant of the month (UTC) the partition held."),
  path: local(() => text().notNull(), "The Parquet file, relative to APM_ARCHIVE: `<table>/month=YYYY-MM/part-0.parquet`."),
  rows: local(() => i64().notNull(), { text: "Rows in the file (read back from it).", unit: "count" }),
  bytes: local(() => i64().notNull(), { text: "Size of the file.", unit: "bytes" }),
  sha256: local(() => text().notNull(), "SHA-256 of the file (hex), checked again by `restore`."),
  content_sha256: local(
    () => text().notNull(),
    "SHA-256 (hex) of the rows' Postgres text forms in file order: the same as read from the partition and decoded from the file.",
  ),
  archived_at: writtenAt("When the file was written and checked."),
});

/** One row per monthly partition `prune` archived to Parquet (src/warehouse/archive). */
export const archives = pgTable("archives", tableOf(archiveColumns), (t) => [primaryKey({ columns: [t.table_name, t.month] })]);

const quarantineColumns = columns({
  id: rowId(),
  run_id: local(i64, "The run that met the record."),
  stream,
  pcode: local(i64, "Project code; 0 for account-level streams."),
  window_start: local(ts, "Start of the window the record came in (the capture time for snapshot streams)."),
  window_end: local(ts, "End of the window the record came in."),
  record_index: local(() => integer(), "Position of the record in its response."),
  raw: local(() => jsonb(), "The record as sent, when it is JSON."),
  raw_text: local(() => text(), "The record as sent, when it is not JSON (a broken body fragment)."),
  reason: local(() => text().notNull(), "Why validation refused it (the offending field and value)."),
  created_at: writtenAt("When it was quarantined."),
});

/** Records that failed validation; the rest of their page is written. */
export const quarantine = pgTable("quarantine", tableOf(quarantineColumns), (t) => [
  index("quarantine_stream_pcode_idx").on(t.stream, t.pcode, t.window_start),
]);

const workerColumns = columns({
  worker_id: local(() => text().primaryKey(), "graphile-worker's id of the worker."),
  host: local(() => text().notNull(), "Host name of the worker process."),
  pid: local(() => integer().notNull(), "Process id of the worker."),
  run_id: local(i64, "The worker process's run (sync_runs.id, command worker)."),
  started_at: writtenAt("When the worker first reported."),
  seen_at: writtenAt("When the worker last reported."),
});

/**
 * Worker processes of the job queue (`apm-sync worker`): a job locked by a worker not seen for
 * APM_WORKER_RECOVERY is unlocked and runs again elsewhere (graphile-worker alone would keep it
 * locked for 4 hours).
 */
export const workerHeartbeats = pgTable("worker_heartbeats", tableOf(workerColumns));

// Created by drizzle's migrator in the warehouse schema; not a drizzle table of ours.
const declared: Record<string, DeclaredDoc> = {
  __drizzle_migrations: {
    kind: "table",
    description: "drizzle's record of the applied migrations (migrations/); `migrate` checks it against the journal.",
    columns: {
      id: { type: "integer", text: "Row id." },
      hash: { type: "text", text: "SHA-256 of the migration's SQL." },
      created_at: { type: "bigint", text: "The migration's journal time (when, epoch ms), not the time it was applied.", unit: "epoch ms" },
    },
  },
};

/** The dictionary's entries of the bookkeeping tables, and of drizzle's own. */
export const ledgerDocs: DocGroup = {
  title: "Bookkeeping",
  tables: Object.fromEntries([
    docEntry(
      syncRuns,
      "One row per invocation: sync, backfill, a worker process (worker) and each of its scheduled ticks (schedule).",
      syncRunColumns,
    ),
    docEntry(
      syncAttempts,
      "Windows in flight: a row is written as a window's fetch begins and removed by the transaction that writes the " +
        "window or records it failed. A row a run that died left behind counts a crash at the next run's start; a window " +
        "in flight at two crashes is not fetched by sync again (it is recorded failed, saying how to fetch it alone) until " +
        "`apm-sync reset` of it or a backfill writes it.",
      syncAttemptColumns,
    ),
    docEntry(
      syncWindows,
      "The ledger: one row per (stream, pcode, partition, window) fetched, written in the same transaction as the " +
        "window's rows; re-fetching a window updates its row. Snapshot streams record each capture as a zero-length window.",
      syncWindowColumns,
    ),
    docEntry(
      watermarks,
      "Per stream, project and partition: the end of the first unbroken run of done windows from the stream's start; " +
        "never moves backwards and never jumps a failed window.",
      watermarkColumns,
    ),
    docEntry(quarantine, "Records that failed validation, with the reason; the rest of their page was written.", quarantineColumns),
    docEntry(
      verifications,
      "One row per `apm-sync verify`: windows the ledger holds done, fetched again and compared with the stored rows " +
        "(their content) without changing them. `status` and the report say the latest.",
      verificationColumns,
    ),
    docEntry(
      archives,
      "One row per monthly partition `apm-sync prune` wrote to Parquet under APM_ARCHIVE before dropping it, read back and " +
        "checked first; `apm-sync restore` loads it back and deletes the row. Its ledger windows are `archived`.",
      archiveColumns,
    ),
    docEntry(
      workerHeartbeats,
      "Queue worker processes (`apm-sync worker`), one row per worker id, touched every few seconds: a job locked by a " +
        "worker not seen for APM_WORKER_RECOVERY is unlocked and runs again elsewhere.",
      workerColumns,
    ),
  ]),
  declared,
};
