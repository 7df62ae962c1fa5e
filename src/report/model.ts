// The report as data: what `report --json` prints and what the HTML page draws, so the two cannot
// disagree. Times are ISO text (UTC); fractions are of time, 0..1.

/** How much of a span the ledger covers, by window status; the five add up to 1. */
export interface CoverageShares {
  readonly done: number;
  readonly truncated: number;
  readonly failed: number;
  /** Fetched once, then dropped by `prune` (the retention): accounted for, not missing. */
  readonly pruned: number;
  readonly missing: number;
}

/** One colour of the heat map: the worst thing in the bucket. */
export type CellState = "done" | "pruned" | "partly missing" | "truncated" | "failed" | "missing";

export interface StreamFigures {
  readonly stream: string;
  /** 0 for account-level streams. */
  readonly pcode: number;
  /** Ledger windows overlapping the range (captures: taken inside it), by status. */
  readonly windows: { readonly done: number; readonly truncated: number; readonly failed: number; readonly pruned: number };
  readonly watermark: string | null;
  /** generatedAt - watermark; null without a watermark. */
  readonly lagMs: number | null;
  readonly lastWindowEnd: string | null;
  /** Rows written by the windows counted in `windows`. */
  readonly rows: number;
  readonly quarantined: number;
  /** Share of the range (up to generatedAt) the windows cover; null for captures (no time span). */
  readonly coverage: CoverageShares | null;
}

export interface CoverageCell extends CoverageShares {
  readonly stream: string;
  readonly pcode: number;
  readonly bucketStart: string;
  readonly state: CellState;
}

export interface RunFigures {
  readonly id: number;
  readonly command: string;
  /** ok, partial, failed, interrupted, running; a `running` run whose process is gone: interrupted. */
  readonly status: string;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly windows: number;
  readonly rows: number;
  readonly failed: number;
  readonly truncated: number;
}

export interface ReportModel {
  readonly generatedAt: string;
  readonly range: {
    readonly from: string;
    readonly to: string;
    /** Size of the heat map's buckets. */
    readonly bucket: "hour" | "day";
    /** Projects asked for (null: all). */
    readonly projects: readonly number[] | null;
  };
  readonly streams: readonly StreamFigures[];
  readonly coverage: readonly CoverageCell[];
  readonly runs: readonly RunFigures[];
  readonly topServices: readonly { pcode: number; service: string; timeSum: number; count: number; error: number }[];
  /** Per hour or day (range.bucket) and project, over all services. */
  readonly errorRate: readonly { pcode: number; bucketStart: string; count: number; error: number; errorRate: number | null }[];
  readonly visitorsPerDay: readonly { pcode: number; day: string; visitors: number }[];
  /** Rows written per warehouse table and UTC day (from the ledger). */
  readonly rowsPerTable: readonly { table: string; day: string; rows: number }[];
  /** Newest first (at most 100), with the error of their last attempt. */
  readonly failedWindows: readonly { stream: string; pcode: number; windowStart: string; windowEnd: string; error: string | null }[];
  /** Newest first (at most 100). */
  readonly truncatedWindows: readonly {
    stream: string;
    pcode: number;
    windowStart: string;
    windowEnd: string;
    expected: number | null;
    fetched: number;
  }[];
  readonly quarantine: readonly { stream: string; pcode: number | null; reason: string; records: number; lastAt: string }[];
}
