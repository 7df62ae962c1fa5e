// The report as data: what `report --json` prints and what the HTML page draws, so the two cannot
// disagree. Times are ISO text (UTC); fractions are of time, 0..1.

/** How much of a span the ledger covers, by window status; the five add up to 1. */
export interface CoverageShares {
  readonly done: number;
  readonly truncated: number;
  readonly failed: number;
  /** Fetched once, then dropped by `prune` (the retention), archived to Parquet first or not: accounted for, not missing. */
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
  /**
   * "run": the counts the run stored when it finished. "ledger": it stored none (interrupted,
   * still running, or stopped by an error), so they are the windows it committed, from the ledger.
   */
  readonly countsFrom: "run" | "ledger";
  /** Why a run did not end ok (the error it stored, else its failed windows' error); null when ok. */
  readonly reason: string | null;
}

/** How many items each list has in all: the model's lists hold the first of them (read-report.ts). */
export interface ListTotals {
  readonly failedWindows: number;
  readonly truncatedWindows: number;
  readonly quarantine: number;
  readonly restatements: number;
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
  /** time_sum is in the unit of stat_transaction.time_sum (the dictionary says which, or that none is documented). */
  readonly topServices: readonly { pcode: number; service: string; timeSum: number; count: number; error: number }[];
  /** Per hour or day (range.bucket) and project, over all services. */
  readonly errorRate: readonly { pcode: number; bucketStart: string; count: number; error: number; errorRate: number | null }[];
  readonly visitorsPerDay: readonly { pcode: number; day: string; visitors: number }[];
  /** Rows written per warehouse table and UTC day (from the ledger). */
  readonly rowsPerTable: readonly { table: string; day: string; rows: number }[];
  /** Newest first (the first REPORT_LIMITS.problemWindows of totals.failedWindows), with the error of their last attempt. */
  readonly failedWindows: readonly { stream: string; pcode: number; windowStart: string; windowEnd: string; error: string | null }[];
  /** Newest first (the first REPORT_LIMITS.problemWindows of totals.truncatedWindows). */
  readonly truncatedWindows: readonly {
    stream: string;
    pcode: number;
    windowStart: string;
    windowEnd: string;
    expected: number | null;
    fetched: number;
  }[];
  /** Largest groups first (the first REPORT_LIMITS.quarantineGroups of totals.quarantine). */
  readonly quarantine: readonly { stream: string; pcode: number | null; reason: string; records: number; lastAt: string }[];
  /**
   * Windows of the range fetched again whose rows differed (the restatements table), newest first
   * (the first REPORT_LIMITS.restatements of totals.restatements): rows and the stream's measure before and after.
   */
  readonly restatements: readonly {
    stream: string;
    pcode: number;
    windowStart: string;
    windowEnd: string;
    rowsBefore: number;
    rowsAfter: number;
    measure: string | null;
    measureBefore: number | null;
    measureAfter: number | null;
    detectedAt: string;
  }[];
  readonly totals: ListTotals;
  /** The months `prune` archived to Parquet (APM_ARCHIVE): each table's file, relative to it. */
  readonly archives: readonly {
    readonly table: string;
    /** YYYY-MM. */
    readonly month: string;
    readonly path: string;
    readonly rows: number;
    readonly bytes: number;
  }[];
  /** The latest `apm-sync verify`: when the copy was last proven, over which range; null: never. */
  readonly lastVerification: {
    readonly id: number;
    readonly finishedAt: string;
    readonly from: string;
    readonly to: string;
    readonly checked: number;
    readonly differing: number;
    readonly failed: number;
  } | null;
}
