// Everything the report needs from the database, read once per report (one query per figure).
import type { SqlHandle } from "../db/driver/exec.ts";
import { type ArchiveRow, readArchives } from "../db/ledger/archives.ts";
import { readLastVerification, type VerificationRow } from "../db/ledger/verifications.ts";
import type { ReportRange } from "./range.ts";
import { type CoverageRow, readCoverage } from "./reads/readCoverage.ts";
import { type ErrorRatePoint, readErrorRate } from "./reads/readErrorRate.ts";
import { type Listed, type ProblemWindow, readProblemWindows } from "./reads/readProblemWindows.ts";
import { type QuarantineGroup, readQuarantineSummary } from "./reads/readQuarantineSummary.ts";
import { type Restatement, readRestatements } from "./reads/readRestatements.ts";
import { readRowsPerDay, type StreamRowsPerDay } from "./reads/readRowsPerDay.ts";
import { type RunHistoryEntry, readRunHistory } from "./reads/readRunHistory.ts";
import { readStreamSummary, type StreamSummary } from "./reads/readStreamSummary.ts";
import { readTopServices, type TopService } from "./reads/readTopServices.ts";
import { type DailyVisitors, readVisitorsPerDay } from "./reads/readVisitorsPerDay.ts";
import type { ReportScope } from "./reads/reportScope.ts";

/**
 * Lengths of the lists the model carries. The page shows the first rows of each and the rest of
 * them folded (render-html.ts); beyond these it says how many more there are and where they are.
 */
export const REPORT_LIMITS = { runs: 10, topServices: 10, problemWindows: 1000, quarantineGroups: 200, restatements: 200 } as const;

export interface ReportInputs {
  readonly streams: StreamSummary[];
  readonly coverage: CoverageRow[];
  readonly runs: RunHistoryEntry[];
  readonly topServices: TopService[];
  readonly errorRate: ErrorRatePoint[];
  readonly visitors: DailyVisitors[];
  readonly rows: StreamRowsPerDay[];
  readonly failed: Listed<ProblemWindow>;
  readonly truncated: Listed<ProblemWindow>;
  readonly quarantine: Listed<QuarantineGroup>;
  readonly restatements: Listed<Restatement>;
  /** The latest `apm-sync verify` (null: never). */
  readonly lastVerification: VerificationRow | null;
  /** The months `prune` archived to Parquet (APM_ARCHIVE). */
  readonly archives: readonly ArchiveRow[];
}

/** Sequential on purpose: the embedded database answers one query at a time anyway. */
export async function readReportInputs(sql: SqlHandle, scope: ReportScope, range: ReportRange): Promise<ReportInputs> {
  return {
    streams: await readStreamSummary(sql, scope),
    coverage: await readCoverage(sql, scope, range.bucketMs),
    runs: await readRunHistory(sql, REPORT_LIMITS.runs),
    topServices: await readTopServices(sql, scope, REPORT_LIMITS.topServices),
    errorRate: await readErrorRate(sql, scope, range.bucket),
    visitors: await readVisitorsPerDay(sql, scope),
    rows: await readRowsPerDay(sql, scope),
    failed: await readProblemWindows(sql, scope, "failed", REPORT_LIMITS.problemWindows),
    truncated: await readProblemWindows(sql, scope, "truncated", REPORT_LIMITS.problemWindows),
    quarantine: await readQuarantineSummary(sql, scope, REPORT_LIMITS.quarantineGroups),
    restatements: await readRestatements(sql, REPORT_LIMITS.restatements, scope),
    lastVerification: await readLastVerification(sql),
    archives: await readArchives(sql),
  };
}
