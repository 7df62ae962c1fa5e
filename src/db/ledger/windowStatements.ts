// The bookkeeping of a window's transaction in two statements: `clearWindow` before its rows (the
// window's earlier quarantined records, ledger rows and in-flight note go), `recordWindows` after
// them (its ledger rows, the marks of the rollup hours it changed, its watermark). With the lock's
// confirmation, the rows' delete and their COPY, a statistics window is five statements. A window
// stored before adds one: the comparison that records a restatement (db/history/restatements.ts);
// what it compares with comes back from the rows' delete, and whether the whole window was stored
// from `clearWindow`, so a first fetch adds nothing.
import { HOUR_MS } from "../../windows/grid.ts";
import { covers, mergeSpans, type Span } from "../../windows/intervals.ts";
import type { WindowStatus } from "../../windows/types.ts";
import { isoTime, type SqlHandle } from "../driver/exec.ts";
import { MARKS_TABLE } from "../rollups/spec.ts";
import { escapeControl } from "../write/cleanText.ts";
import type { WindowKey } from "./windowsInFlight.ts";

/** One ledger entry (sync_windows); counts default to 0. */
export interface LedgerRow {
  readonly windowStart: number;
  readonly windowEnd: number;
  readonly status: WindowStatus;
  readonly expectedTotal?: number | null;
  readonly rowsFetched?: number;
  readonly rowsWritten?: number;
  readonly requests?: number;
  readonly retries?: number;
  readonly splits?: number;
  readonly quarantined?: number;
  readonly error?: string | null;
}

/** The spans (ms) of a rollup's hours that a write changed: one per window. */
export interface RollupMarks {
  readonly source: string;
  readonly spans: readonly { readonly fromMs: number; readonly toMs: number }[];
}

/** What a transaction of a stream's windows records at its end. */
export interface WindowRecords {
  readonly window: Omit<WindowKey, "start" | "end">;
  readonly runId: number | null;
  readonly ledger: readonly LedgerRow[];
  /** The rollup whose hours the windows' rows changed, and the spans they changed; null: none. */
  readonly marks: RollupMarks | null;
  /** The stream's new watermark (ms), written only if it moves forward; null: unchanged. */
  readonly watermark: number | null;
}

/** What the ledger had stored of a window before its re-fetch: its done or truncated pieces. */
export interface StoredWindow {
  /** The pieces cover the whole window (in one piece or split). */
  readonly whole: boolean;
  /** The pieces, sorted: how the window was split when it was stored. */
  readonly pieces: readonly Span[];
}

/**
 * Deletes what an earlier fetch of the window recorded: quarantined records, ledger rows inside it,
 * its in-flight note. Says what the ledger had stored of it: whether the whole window, done or
 * truncated, in one piece or split (a restatement compares with what was stored,
 * db/history/restatements.ts; a part of it, the short last window of an incremental run, was
 * another window), and in which pieces. `window_start < end` is implied (a window is never empty)
 * and bounds the index scans: without it each window read every later ledger row of its stream.
 */
export async function clearWindow(sql: SqlHandle, w: WindowKey): Promise<StoredWindow> {
  const [start, end] = [isoTime(w.start), isoTime(w.end)];
  const gone = await sql<{ status: WindowStatus; start: number; end: number }[]>`
    WITH "quarantined" AS (
      DELETE FROM "quarantine" WHERE "stream" = ${w.stream} AND "pcode" = ${w.pcode}::bigint
        AND "window_start" >= ${start}::timestamptz AND "window_start" < ${end}::timestamptz AND "window_end" <= ${end}::timestamptz),
    "in_flight" AS (
      DELETE FROM "sync_attempts" WHERE "stream" = ${w.stream} AND "pcode" = ${w.pcode}::bigint AND "partition" = ${w.partition}
        AND "window_start" = ${start}::timestamptz AND "window_end" = ${end}::timestamptz)
    DELETE FROM "sync_windows" WHERE "stream" = ${w.stream} AND "pcode" = ${w.pcode}::bigint AND "partition" = ${w.partition}
      AND "window_start" >= ${start}::timestamptz AND "window_start" < ${end}::timestamptz AND "window_end" <= ${end}::timestamptz
    RETURNING "status", (extract(epoch from "window_start") * 1000)::float8 AS "start", (extract(epoch from "window_end") * 1000)::float8 AS "end"`.execute();
  const pieces = gone.filter((r) => r.status === "done" || r.status === "truncated").sort((a, b) => a.start - b.start);
  return { whole: covers(mergeSpans(pieces), w.start, w.end), pieces: pieces.map((p) => ({ start: p.start, end: p.end })) };
}

/** The ledger rows as one JSON parameter (arrays of nulls do not survive every driver's encoding). */
function ledgerJson(rows: readonly LedgerRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      window_start: isoTime(r.windowStart),
      window_end: isoTime(r.windowEnd),
      status: r.status,
      expected_total: r.expectedTotal ?? null,
      rows_fetched: r.rowsFetched ?? 0,
      rows_written: r.rowsWritten ?? 0,
      requests: r.requests ?? 0,
      retries: r.retries ?? 0,
      splits: r.splits ?? 0,
      quarantined: r.quarantined ?? 0,
      error: r.error == null ? null : escapeControl(r.error),
    })),
  );
}

/**
 * Upserts the windows' ledger rows (re-fetching a window updates its row), marks the rollup hours
 * they changed, and moves the watermark forward; one statement for a transaction's windows. Error
 * texts are stored with their control characters escaped.
 */
export async function recordWindows(sql: SqlHandle, c: WindowRecords): Promise<void> {
  const { stream, pcode, partition } = c.window;
  await sql`
    WITH "ledger" AS (
      INSERT INTO "sync_windows" ("stream", "pcode", "partition", "window_start", "window_end", "status", "expected_total",
        "rows_fetched", "rows_written", "requests", "retries", "splits", "quarantined", "error", "run_id", "finished_at")
      SELECT ${stream}, ${pcode}::bigint, ${partition}, w.*, ${c.runId}::bigint, now()
      FROM jsonb_to_recordset(${ledgerJson(c.ledger)}::jsonb) AS w("window_start" timestamptz, "window_end" timestamptz,
        "status" text, "expected_total" bigint, "rows_fetched" bigint, "rows_written" bigint, "requests" int, "retries" int,
        "splits" int, "quarantined" int, "error" text)
      ON CONFLICT ON CONSTRAINT "sync_windows_window_key" DO UPDATE SET
        "status" = EXCLUDED."status", "expected_total" = EXCLUDED."expected_total", "rows_fetched" = EXCLUDED."rows_fetched",
        "rows_written" = EXCLUDED."rows_written", "requests" = EXCLUDED."requests", "retries" = EXCLUDED."retries",
        "splits" = EXCLUDED."splits", "quarantined" = EXCLUDED."quarantined", "error" = EXCLUDED."error",
        "gone_from" = NULL, "run_id" = EXCLUDED."run_id", "started_at" = now(), "finished_at" = now()),
    "marked" AS (
      INSERT INTO ${sql(MARKS_TABLE)} ("source", "pcode", "hour", "partial")
      SELECT ${c.marks?.source ?? ""}, ${pcode}::bigint, h, s."partial"
      FROM jsonb_to_recordset(${marksJson(c)}::jsonb) AS s("from" timestamptz, "to" timestamptz, "partial" boolean),
        generate_series(s."from", s."to" - interval '1 hour', interval '1 hour') AS h)
    INSERT INTO "watermarks" ("stream", "pcode", "partition", "watermark")
    SELECT ${stream}, ${pcode}::bigint, ${partition}, ${c.watermark === null ? null : isoTime(c.watermark)}::timestamptz
    WHERE ${c.watermark !== null}::boolean
    ON CONFLICT ("stream", "pcode", "partition") DO UPDATE
      SET "watermark" = GREATEST("watermarks"."watermark", EXCLUDED."watermark"), "updated_at" = now()`.execute();
}

/**
 * The marks' spans as one JSON parameter: each widened to whole hours, with whether it is partial.
 * Whole hours (windows of an hour or more, on the hour) are read by a statistic's views from the
 * raw rows: its hourly table needs refreshing only for the others (db/rollups/refresh.ts). A span
 * is partial unless the ledger rows inside it are all whole; marks of no ledger window say nothing
 * of the rows: partial.
 */
function marksJson(c: WindowRecords): string {
  const whole = (r: LedgerRow) => r.windowStart % HOUR_MS === 0 && r.windowEnd - r.windowStart >= HOUR_MS;
  const spans = (c.marks?.spans ?? []).filter((m) => m.toMs > m.fromMs);
  return JSON.stringify(
    spans.map((m) => {
      const inside = c.ledger.filter((r) => r.windowStart >= m.fromMs && r.windowEnd <= m.toMs);
      return {
        from: isoTime(Math.floor(m.fromMs / HOUR_MS) * HOUR_MS),
        to: isoTime(Math.ceil(m.toMs / HOUR_MS) * HOUR_MS),
        partial: inside.length === 0 || !inside.every(whole),
      };
    }),
  );
}
