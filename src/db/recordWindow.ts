// The ledger row of a window, written in the window's transaction.
import { escapeControl } from "./cleanText.ts";
import { isoTime, type SqlHandle } from "./exec.ts";

export type WindowStatus = "done" | "failed" | "truncated" | "pruned";

/** One ledger entry (sync_windows). Counts default to 0, startedAt and finishedAt to the database's now() (null: not finished). */
export interface LedgerRow {
  readonly stream: string;
  /** 0 for account-level streams. */
  readonly pcode: number;
  /** '' unless the stream has several partitions (e.g. one per filter). */
  readonly partition?: string;
  readonly windowStart: Date | number;
  readonly windowEnd: Date | number;
  readonly status: WindowStatus;
  readonly expectedTotal?: number | null;
  readonly rowsFetched?: number;
  readonly rowsWritten?: number;
  readonly requests?: number;
  readonly retries?: number;
  readonly splits?: number;
  readonly quarantined?: number;
  readonly error?: string | null;
  readonly runId?: number | null;
  readonly startedAt?: Date | number;
  readonly finishedAt?: Date | number | null;
}

/**
 * Upserts the ledger row of (stream, pcode, partition, window): re-fetching a window updates its
 * row instead of adding one. Returns the row id. The error text is stored with its control
 * characters escaped (a server's message may quote a NUL, or a compressed bomb's bytes).
 */
export async function recordWindow(sql: SqlHandle, row: LedgerRow): Promise<number> {
  const [result] = await sql<{ id: string }[]>`
    INSERT INTO "sync_windows" ("stream", "pcode", "partition", "window_start", "window_end", "status", "expected_total",
      "rows_fetched", "rows_written", "requests", "retries", "splits", "quarantined", "error", "run_id", "started_at", "finished_at")
    VALUES (${row.stream}, ${row.pcode}::bigint, ${row.partition ?? ""}, ${isoTime(row.windowStart)}::timestamptz,
      ${isoTime(row.windowEnd)}::timestamptz, ${row.status}, ${row.expectedTotal ?? null}::bigint, ${row.rowsFetched ?? 0}::bigint,
      ${row.rowsWritten ?? 0}::bigint, ${row.requests ?? 0}::int, ${row.retries ?? 0}::int, ${row.splits ?? 0}::int,
      ${row.quarantined ?? 0}::int, ${row.error == null ? null : escapeControl(row.error)}::text, ${row.runId ?? null}::bigint,
      coalesce(${row.startedAt === undefined ? null : isoTime(row.startedAt)}::timestamptz, now()),
      coalesce(${row.finishedAt == null ? null : isoTime(row.finishedAt)}::timestamptz,
        CASE WHEN ${row.finishedAt === null}::boolean THEN NULL ELSE now() END))
    ON CONFLICT ON CONSTRAINT "sync_windows_window_key" DO UPDATE SET
      "status" = EXCLUDED."status", "expected_total" = EXCLUDED."expected_total", "rows_fetched" = EXCLUDED."rows_fetched",
      "rows_written" = EXCLUDED."rows_written", "requests" = EXCLUDED."requests", "retries" = EXCLUDED."retries",
      "splits" = EXCLUDED."splits", "quarantined" = EXCLUDED."quarantined", "error" = EXCLUDED."error",
      "run_id" = EXCLUDED."run_id", "started_at" = EXCLUDED."started_at", "finished_at" = EXCLUDED."finished_at"
    RETURNING "id"::text AS id`.execute();
  return Number(result!.id);
}
