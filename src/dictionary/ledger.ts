// Bookkeeping: runs, the window ledger, watermarks, quarantine, queue worker heartbeats and drizzle's
// migration record (docs/design.md "Ledger and watermarks"). apm-sync's own data: no API field.
import { type DeclaredDoc, type DocGroup, STREAM, type TableDoc } from "../kernel/docs.ts";

const PARTITION = "Partition of the stream: '' unless it has several (a host/port or tx filter, a fanned-out project code or group key).";

const tables: Record<string, TableDoc> = {
  sync_runs: {
    description: "One row per invocation: sync, backfill, a worker process (worker) and each of its scheduled ticks (schedule).",
    columns: {
      id: { text: "Run id; the run_id of the rows and ledger entries it wrote." },
      command: { text: "sync, backfill, worker or schedule." },
      args: { text: "The command's arguments (stream and project selection, range...); never a token." },
      version: { text: "apm-sync version that ran it." },
      started_at: { text: "When the run started." },
      finished_at: { text: "When the run finished; null while it runs (or if it died before a later run marked it interrupted)." },
      status: {
        text:
          "running, ok (every selected stream complete), partial (some window or stream failed), failed (the run " +
          "itself stopped on an error), cancelled " +
          "(stopped by a signal) or interrupted (the process died; marked by the next run).",
      },
      counts: {
        text: "Per stream: windows, rows, requests, retries, splits, truncated and quarantined counts; a run that failed says why under the key error (text).",
      },
    },
  },
  sync_attempts: {
    description:
      "Windows in flight: a row is written as a window's fetch begins and removed by the transaction that writes the " +
      "window or records it failed. A row a run that died left behind counts a crash at the next run's start; a window " +
      "in flight at two crashes is not fetched by sync again (it is recorded failed, saying how to fetch it alone) until " +
      "`apm-sync reset` of it or a backfill writes it.",
    columns: {
      stream: { text: STREAM },
      pcode: { text: "Project code; 0 for account-level streams." },
      partition: { text: PARTITION },
      window_start: { text: "Start (inclusive) of the window, UTC." },
      window_end: { text: "End (exclusive) of the window, UTC." },
      run_id: { text: "The run fetching it now; null once the crash of the run that left it was counted." },
      crashes: { text: "Runs that died while the window was in flight.", unit: "count" },
      updated_at: { text: "When the row was last written." },
    },
  },
  sync_windows: {
    description:
      "The ledger: one row per (stream, pcode, partition, window) fetched, written in the same transaction as the " +
      "window's rows; re-fetching a window updates its row. Snapshot streams record each capture as a zero-length window.",
    columns: {
      id: { text: "Row id." },
      stream: { text: STREAM },
      pcode: { text: "Project code; 0 for account-level streams." },
      partition: { text: PARTITION },
      window_start: { text: "Start (inclusive) of the window, UTC; the capture time for snapshot streams." },
      window_end: { text: "End (exclusive) of the window, UTC." },
      status: {
        text: "done, failed (retried by the next run), truncated (a 5-minute window still cut by the record cap: stored as it came) pruned (its rows were dropped with their monthly partitions by `apm-sync prune`, the retention: accounted for, never fetched again) or archived (the same, the rows written first to Parquet under APM_ARCHIVE: see the archives table; `apm-sync restore` makes them done again).",
      },
      expected_total: {
        text: "Records the server said exist (total) where the response carries a count (statistics, range records); null otherwise.",
        unit: "count",
      },
      rows_fetched: { text: "Records the response(s) held.", unit: "count" },
      rows_written: { text: "Rows written to the stream's table.", unit: "count" },
      requests: {
        text: "HTTP requests made for the window, retries and splits included (a split's are all counted on its first part).",
        unit: "count",
      },
      retries: { text: "Requests that were retries.", unit: "count" },
      splits: { text: "Times the window was halved because the record cap cut it.", unit: "count" },
      quarantined: { text: "Records quarantined (failed validation, or repeated a natural key).", unit: "count" },
      error: { text: "Why a failed window failed (never a token)." },
      run_id: { text: "The run (sync_runs.id) that recorded the window last." },
      started_at: { text: "When the window's fetch started." },
      finished_at: { text: "When the window was recorded." },
    },
  },
  watermarks: {
    description:
      "Per stream, project and partition: the end of the first unbroken run of done windows from the stream's start; " +
      "never moves backwards and never jumps a failed window.",
    columns: {
      stream: { text: STREAM },
      pcode: { text: "Project code; 0 for account-level streams." },
      partition: { text: PARTITION },
      watermark: { text: "Everything before this time is fetched (UTC)." },
      updated_at: { text: "When the watermark last moved." },
    },
  },
  quarantine: {
    description: "Records that failed validation, with the reason; the rest of their page was written.",
    columns: {
      id: { text: "Row id." },
      run_id: { text: "The run that met the record." },
      stream: { text: STREAM },
      pcode: { text: "Project code; 0 for account-level streams." },
      window_start: { text: "Start of the window the record came in (the capture time for snapshot streams)." },
      window_end: { text: "End of the window the record came in." },
      record_index: { text: "Position of the record in its response." },
      raw: { text: "The record as sent, when it is JSON." },
      raw_text: { text: "The record as sent, when it is not JSON (a broken body fragment)." },
      reason: { text: "Why validation refused it (the offending field and value)." },
      created_at: { text: "When it was quarantined." },
    },
  },
  verifications: {
    description:
      "One row per `apm-sync verify`: windows the ledger holds done, fetched again and compared with the stored rows " +
      "(their content) without changing them. `status` and the report say the latest.",
    columns: {
      id: { text: "Row id." },
      range_start: { text: "Start (inclusive) of the range verified, UTC." },
      range_end: { text: "End (exclusive) of the range verified, UTC." },
      args: { text: "The selection: streams, projects and sample (null: every done window of the range); never a token." },
      windows_checked: { text: "Done windows fetched again and compared.", unit: "count" },
      windows_differing: { text: "Of those, windows whose served rows differ from the stored ones.", unit: "count" },
      windows_failed: { text: "Windows that could not be fetched again (not compared).", unit: "count" },
      started_at: { text: "When the verification started." },
      finished_at: { text: "When it finished." },
    },
  },
  archives: {
    description:
      "One row per monthly partition `apm-sync prune` wrote to Parquet under APM_ARCHIVE before dropping it, read back and " +
      "checked first; `apm-sync restore` loads it back and deletes the row. Its ledger windows are `archived`.",
    columns: {
      table_name: { text: "The warehouse table the partition belonged to." },
      month: { text: "First instant of the month (UTC) the partition held." },
      path: { text: "The Parquet file, relative to APM_ARCHIVE: `<table>/month=YYYY-MM/part-0.parquet`." },
      rows: { text: "Rows in the file (read back from it).", unit: "count" },
      bytes: { text: "Size of the file.", unit: "bytes" },
      sha256: { text: "SHA-256 of the file (hex), checked again by `restore`." },
      content_sha256: {
        text: "SHA-256 (hex) of the rows' Postgres text forms in file order: the same as read from the partition and decoded from the file.",
      },
      archived_at: { text: "When the file was written and checked." },
    },
  },
  worker_heartbeats: {
    description:
      "Queue worker processes (`apm-sync worker`), one row per worker id, touched every few seconds: a job locked by a " +
      "worker not seen for APM_WORKER_RECOVERY is unlocked and runs again elsewhere.",
    columns: {
      worker_id: { text: "graphile-worker's id of the worker." },
      host: { text: "Host name of the worker process." },
      pid: { text: "Process id of the worker." },
      run_id: { text: "The worker process's run (sync_runs.id, command worker)." },
      started_at: { text: "When the worker first reported." },
      seen_at: { text: "When the worker last reported." },
    },
  },
};

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

export const ledgerDocs: DocGroup = { title: "Bookkeeping", tables, declared };
