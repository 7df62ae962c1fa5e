// The windows' shared vocabulary: what a ledger window can be, and what the planner plans. Read by
// the planner, the engine, the database's ledger and the reports alike.
import type { Span } from "./intervals.ts";

/**
 * What a ledger window (`sync_windows.status`) can be, declared once (the table's check and the
 * writers take it from here): done; failed (planned again); truncated (a 5-minute window still cut
 * by the record cap, stored as it came); pruned (its rows were dropped by `prune`, the retention:
 * covered, never fetched again); archived (the same, its rows written to Parquet first under
 * APM_ARCHIVE: the archives table says where).
 */
export const WINDOW_STATUSES = ["done", "failed", "truncated", "pruned", "archived"] as const;
export type WindowStatus = (typeof WINDOW_STATUSES)[number];

/** The statuses of windows whose rows `prune` dropped (archived: written to Parquet first): covered, never fetched again. */
export const GONE_STATUSES = ["pruned", "archived"] as const satisfies readonly WindowStatus[];

/** Whether a window's rows were dropped by `prune` (GONE_STATUSES). */
export const isGone = (status: WindowStatus): boolean => (GONE_STATUSES as readonly WindowStatus[]).includes(status);

/** The other statuses: what a window was before `prune` made it gone (the ledger's gone_from), and what `restore` gives back. */
export const KEPT_STATUSES = WINDOW_STATUSES.filter((s) => !isGone(s));

/** One ledger row (`sync_windows`) as the planner sees it. */
export interface LedgerWindow {
  start: number;
  end: number;
  status: WindowStatus;
}

export type WindowReason = "new" | "lookback" | "retry" | "gap" | "backfill" | "open-event";

/** One planned request window, on the 5-minute grid; fetched whole, or as its `parts`. */
export interface Window {
  start: number;
  end: number;
  reason: WindowReason;
  /**
   * A window widened over stored windows of another grain (widenOverLedger): fetched as these
   * grain pieces, each within the limit, and written in one transaction. Absent: one request.
   */
  parts?: Span[];
}
