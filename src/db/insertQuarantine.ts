// Records that failed validation, kept with their reason; the rest of the page is written.
import { execute, isoTime, type SqlHandle } from "./exec.ts";
import { chunk, rowsToJson } from "./rowsJson.ts";
import { insertFromJson } from "./sqlText.ts";
import { tableInfo } from "./tables.ts";

export interface QuarantineRow {
  readonly runId?: number | null;
  readonly stream: string;
  readonly pcode?: number | null;
  readonly windowStart?: Date | number | null;
  readonly windowEnd?: Date | number | null;
  /** Position of the record in its response. */
  readonly recordIndex?: number | null;
  /** The record as parsed JSON; a string is stored as text (a fragment that is not JSON). */
  readonly raw: unknown;
  readonly reason: string;
}

const COLUMNS = ["run_id", "stream", "pcode", "window_start", "window_end", "record_index", "raw", "raw_text", "reason"];

/** Inserts quarantined records in batches; returns the number inserted. */
export async function insertQuarantine(sql: SqlHandle, rows: readonly QuarantineRow[]): Promise<number> {
  const info = tableInfo("quarantine");
  const statement = insertFromJson(info, COLUMNS);
  let inserted = 0;
  for (const batch of chunk(rows)) {
    const mapped = batch.map((r) => ({
      run_id: r.runId ?? null,
      stream: r.stream,
      pcode: r.pcode ?? null,
      window_start: r.windowStart == null ? null : isoTime(r.windowStart),
      window_end: r.windowEnd == null ? null : isoTime(r.windowEnd),
      record_index: r.recordIndex ?? null,
      raw: typeof r.raw === "string" || r.raw === undefined ? null : r.raw,
      raw_text: typeof r.raw === "string" ? r.raw : null,
      reason: r.reason,
    }));
    inserted += await execute(sql, { text: statement.text, params: [rowsToJson(info, COLUMNS, mapped)] });
  }
  return inserted;
}
