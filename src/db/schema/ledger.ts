// Bookkeeping: runs, the window ledger, watermarks and quarantined records (docs/design.md "Ledger and watermarks").
import { sql } from "drizzle-orm";
import { bigserial, check, index, integer, jsonb, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";
import { i64, ts } from "../../kernel/sql-types.ts";
import { ledgerWindowColumns } from "../../kernel/tables.ts";
import { WINDOW_STATUSES } from "../../windows/plan.ts";

/** One row per invocation. `args` never holds secrets. */
export const syncRuns = pgTable("sync_runs", {
  id: bigserial({ mode: "number" }).primaryKey(),
  command: text().notNull(),
  args: jsonb().notNull().default({}),
  version: text(),
  started_at: ts().notNull().defaultNow(),
  finished_at: ts(),
  status: text().notNull().default("running"),
  counts: jsonb().notNull().default({}),
});

/**
 * The ledger: one row per (stream, pcode, partition, window). Re-fetching a window updates its
 * row. pcode 0 for account-level streams; partition '' unless a stream has several (filters).
 * A window whose rows `prune` dropped stays, as `pruned`: its time is accounted for, not missing;
 * as `archived` when prune wrote them to Parquet first (APM_ARCHIVE; `restore` loads them back).
 */
export const syncWindows = pgTable(
  "sync_windows",
  {
    id: bigserial({ mode: "number" }).primaryKey(),
    ...ledgerWindowColumns(),
    status: text().notNull(),
    expected_total: i64(),
    rows_fetched: i64().notNull().default(0),
    rows_written: i64().notNull().default(0),
    requests: integer().notNull().default(0),
    retries: integer().notNull().default(0),
    splits: integer().notNull().default(0),
    quarantined: integer().notNull().default(0),
    error: text(),
    run_id: i64(),
    started_at: ts().notNull().defaultNow(),
    finished_at: ts(),
  },
  (t) => [
    unique("sync_windows_window_key").on(t.stream, t.pcode, t.partition, t.window_start, t.window_end),
    // The windows that are not done (status, report, the problem lists ask for those): partial, so
    // it stays small and never competes with the window key for reads of done windows (coverage).
    index("sync_windows_status_idx").on(t.stream, t.pcode, t.status).where(sql`${t.status} <> 'done'`),
    check("sync_windows_status_check", sql`${t.status} in (${sql.raw(WINDOW_STATUSES.map((s) => `'${s}'`).join(", "))})`),
  ],
);

/**
 * Windows in flight: a row is written as a window's fetch begins and removed by the transaction
 * that writes (or records the failure of) the window. A row left by a run that died is a window
 * that was in flight when its process stopped; `crashes` counts such runs (src/db/ledger/windowsInFlight.ts).
 */
export const syncAttempts = pgTable(
  "sync_attempts",
  {
    ...ledgerWindowColumns(),
    /** The run fetching it now; null once a run that died has been counted. */
    run_id: i64(),
    crashes: integer().notNull().default(0),
    updated_at: ts().notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.stream, t.pcode, t.partition, t.window_start, t.window_end] })],
);

/** End of the first unbroken run of done windows; only ever moves forward. */
export const watermarks = pgTable(
  "watermarks",
  {
    stream: text().notNull(),
    pcode: i64().notNull(),
    partition: text().notNull().default(""),
    watermark: ts().notNull(),
    updated_at: ts().notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.stream, t.pcode, t.partition] })],
);

/**
 * One row per `apm-sync verify`: the range and selection it re-read, how many done windows it
 * fetched again and compared with the stored rows, and how many differed or could not be fetched.
 */
export const verifications = pgTable(
  "verifications",
  {
    id: bigserial({ mode: "number" }).primaryKey(),
    range_start: ts().notNull(),
    range_end: ts().notNull(),
    args: jsonb().notNull().default({}),
    windows_checked: integer().notNull(),
    windows_differing: integer().notNull(),
    windows_failed: integer().notNull(),
    started_at: ts().notNull(),
    finished_at: ts().notNull().defaultNow(),
  },
  (t) => [index("verifications_finished_idx").on(t.finished_at)],
);

/**
 * One row per monthly partition `prune` wrote to Parquet under APM_ARCHIVE before dropping it
 * (src/warehouse/archive/): where the file is, what it holds and how it was checked. `restore`
 * loads it back and deletes the row.
 */
export const archives = pgTable(
  "archives",
  {
    table_name: text().notNull(),
    month: ts().notNull(),
    path: text().notNull(),
    rows: i64().notNull(),
    bytes: i64().notNull(),
    sha256: text().notNull(),
    content_sha256: text().notNull(),
    archived_at: ts().notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.table_name, t.month] })],
);

/** Records that failed validation; the rest of their page is written. */
export const quarantine = pgTable(
  "quarantine",
  {
    id: bigserial({ mode: "number" }).primaryKey(),
    run_id: i64(),
    stream: text().notNull(),
    pcode: i64(),
    window_start: ts(),
    window_end: ts(),
    record_index: integer(),
    /** The record when it is JSON; `raw_text` otherwise (a broken body fragment). */
    raw: jsonb(),
    raw_text: text(),
    reason: text().notNull(),
    created_at: ts().notNull().defaultNow(),
  },
  (t) => [index("quarantine_stream_pcode_idx").on(t.stream, t.pcode, t.window_start)],
);

/**
 * Worker processes of the job queue (`apm-sync worker`), one row per queue worker id, touched
 * every few seconds: a job locked by a worker not seen for APM_WORKER_RECOVERY is unlocked and
 * runs again elsewhere (graphile-worker alone would keep it locked for 4 hours).
 */
export const workerHeartbeats = pgTable("worker_heartbeats", {
  worker_id: text().primaryKey(),
  host: text().notNull(),
  pid: integer().notNull(),
  run_id: i64(),
  started_at: ts().notNull().defaultNow(),
  seen_at: ts().notNull().defaultNow(),
});
