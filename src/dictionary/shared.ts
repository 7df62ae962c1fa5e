// Columns many tables share (src/kernel/tables.ts), described once. A table's own entry for the
// same name wins where its meaning differs (pcode of the project list is the record's projectCode).
import type { ColumnDoc } from "../kernel/docs.ts";

export const SHARED_COLUMNS: Readonly<Record<string, ColumnDoc>> = {
  pcode: {
    text:
      "Project code of the row: for project-level operations the project the request was made for (x-service-pcode " +
      "header), never a record's own pcode field.",
    conversion: "bigint (project codes beyond 2^31 exist)",
  },
  window_start: {
    text:
      "Start (inclusive) of the time window the row was fetched for: the request's stime. Windows are half-open, UTC, " +
      "on a 5-minute grid; re-fetching a window replaces its rows.",
    conversion: "the request's epoch ms, stored as timestamptz (UTC)",
  },
  window_end: {
    text: "End (exclusive) of the time window the row was fetched for: the request's etime.",
    conversion: "the request's epoch ms, stored as timestamptz (UTC)",
  },
  extra: {
    text: "Fields of the API record that have no column, under their original key: never dropped; {} when there are none.",
  },
  run_id: { text: "The run (sync_runs.id) that last wrote the row, or that marked it deleted." },
  synced_at: {
    text:
      "When apm-sync last wrote the row (database clock). Re-fetching a window rewrites its aggregate rows; an upsert " +
      "that changes nothing (points, snapshots) leaves the row as it was; dimensions are touched by every complete list.",
  },
  first_seen_at: { text: "When apm-sync first stored the row." },
  last_seen_at: { text: "When a complete list last contained the row." },
  deleted_at: {
    text: "Soft delete: when a complete list first lacked the row; cleared when it reappears. Null while the row is listed.",
  },
  captured_at: {
    text: "When apm-sync read the value (its clock when the answer arrived): the operation returns current values without a time.",
  },
};
