// Records that failed validation, kept with their reason; the rest of the page is written.

import type { SqlHandle } from "../driver/exec.ts";
import { tableInfo } from "../tables.ts";
import { escapedOriginal, isCleanJson, jsonText } from "./cleanText.ts";
import { type Copied, copyRows } from "./copyRows.ts";

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

/**
 * COPYs quarantined records in (inside the caller's transaction).
 * A record holding text the database cannot hold is stored cleaned in `raw`, and its JSON text,
 * escaped, in `raw_text`, so the original is never lost.
 */
export function insertQuarantine(sql: SqlHandle, rows: readonly QuarantineRow[]): Promise<Copied> {
  const items = rows.map((r) => {
    const json = typeof r.raw === "string" || r.raw === undefined ? null : r.raw;
    return {
      run_id: r.runId ?? null,
      stream: r.stream,
      pcode: r.pcode ?? null,
      window_start: r.windowStart ?? null,
      window_end: r.windowEnd ?? null,
      record_index: r.recordIndex ?? null,
      raw: json,
      raw_text: typeof r.raw === "string" ? r.raw : json !== null && !isCleanJson(jsonText(json)) ? escapedOriginal(json) : null,
      reason: r.reason,
    };
  });
  return copyRows(sql, tableInfo("quarantine"), COLUMNS, items);
}
