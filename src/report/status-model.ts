// What `status` says, as data: the text and `--json` are both made from it, so they agree. The
// ledger's streams plus the configured ones that never ran; failed windows grouped by error.

import { isAccountStream } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { ArchiveRow } from "../db/ledger/archives.ts";
import type { VerificationRow } from "../db/ledger/verifications.ts";
import { splitAdvice } from "../engine/describe-error.ts";
import { selectOperations } from "../engine/targets.ts";
import { UsageError } from "../usage-error.ts";
import { monthName } from "../windows/months.ts";
import type { Listed } from "./reads/readProblemWindows.ts";
import type { Restatement } from "./reads/readRestatements.ts";
import type { FailureRow, LastRun, LedgerHole, StatusReport, StreamStatus } from "./reads/readStatus.ts";

/** An archived month as status shows it: its month as `YYYY-MM` (UTC). */
export type ArchivedMonth = Omit<ArchiveRow, "month"> & { readonly month: string };

export interface StatusStream extends StreamStatus {
  /** Selected by the configuration but without a single window or capture in the ledger. */
  readonly neverRun: boolean;
}

/** Failed windows that failed alike: one error, what to do about it once, where and when. */
export interface FailureGroup {
  readonly error: string;
  readonly advice: string | null;
  readonly windows: number;
  readonly streams: readonly string[];
  /** 0 for account-level streams. */
  readonly pcodes: readonly number[];
  readonly firstStart: Date;
  readonly lastEnd: Date;
  readonly lastFinishedAt: Date | null;
}

export interface StatusModel {
  readonly streams: readonly StatusStream[];
  readonly failed: {
    /** Every failed window of the ledger: the sum of the streams' failed columns. */
    readonly total: number;
    /** Largest first. */
    readonly groups: readonly FailureGroup[];
  };
  /**
   * Every hole of the ledger: time no window of a windowed stream covers, between its first and
   * last window (a range reset forgot, an interrupted backfill, an outage). The next sync fetches them.
   */
  readonly holes: readonly LedgerHole[];
  readonly lastRun: LastRun | null;
  /** The latest `apm-sync verify` (null: the copy was never verified). */
  readonly lastVerification: VerificationRow | null;
  /** The months `prune` archived to Parquet (APM_ARCHIVE): table, month (`YYYY-MM`), file (relative to it), rows, bytes. */
  readonly archives: readonly ArchivedMonth[];
  /** The latest windows the server answered differently when fetched again (restatements table), and how many in all. */
  readonly restatements: Listed<Restatement>;
  /** Why the configured selection could not be read (the ledger is shown alone then). */
  readonly configProblem: string | null;
}

/** A stream of a project (0: the account) that the configuration selects. */
export interface ExpectedStream {
  readonly pcode: number;
  readonly stream: string;
}

/**
 * What `sync` would run: the selected project streams of every configured project, and the
 * selected account streams when there is an account token.
 */
export function expectedStreams(config: Config): { expected: ExpectedStream[]; problem: string | null } {
  let ops: ReturnType<typeof selectOperations>;
  try {
    ops = selectOperations(config.sync.streams, config.sync.inputs);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return { expected: [], problem: e.message };
  }
  const account = config.api.accountToken ? ops.filter(isAccountStream).map((op) => ({ pcode: 0, stream: op.id })) : [];
  const projectOps = ops.filter((op) => !isAccountStream(op));
  const projects = config.api.projects.flatMap((p) => projectOps.map((op) => ({ pcode: p.pcode, stream: op.id })));
  return { expected: [...account, ...projects], problem: null };
}

/** How many restatements `status` reads and shows (the table has them all). */
export const RESTATEMENTS_LISTED = 10;

export function statusModel(
  report: StatusReport,
  expected: readonly ExpectedStream[],
  configProblem: string | null = null,
  restatements: Listed<Restatement> = { rows: [], total: 0 },
): StatusModel {
  const key = (s: ExpectedStream) => `${s.pcode}/${s.stream}`;
  const known = new Set(report.streams.map(key));
  const neverRun = expected.filter((e) => !known.has(key(e)));
  const streams: StatusStream[] = [
    ...report.streams.map((s) => ({ ...s, neverRun: false })),
    ...[...new Map(neverRun.map((e) => [key(e), e])).values()].map((e) => never(e)),
  ].sort((a, b) => a.pcode - b.pcode || a.stream.localeCompare(b.stream));
  const groups = groupFailures(report.failures);
  const failed = { total: groups.reduce((a, g) => a + g.windows, 0), groups };
  return {
    streams,
    failed,
    holes: report.holes,
    lastRun: report.lastRun,
    lastVerification: report.lastVerification ?? null,
    archives: (report.archives ?? []).map((a) => ({ ...a, month: monthName(a.month) })),
    restatements,
    configProblem,
  };
}

function never(e: ExpectedStream): StatusStream {
  const zero = { doneWindows: 0, failedWindows: 0, truncatedWindows: 0, quarantinedRecords: 0, prunedWindows: 0, prunedUntil: null };
  return { pcode: e.pcode, stream: e.stream, watermark: null, lagSeconds: null, lastFinishedAt: null, ...zero, neverRun: true };
}

// An authentication failure names its operation ("... for project 7 on stat.sql: HTTP 401"), and
// a stream stopped by another stream's refusal records that one's: the streams say where instead.
const AUTH_OPERATION = /^(authentication failed for .+?) on [\w.]+: /;

/** Rows of the same error (and advice) become one group, over streams and projects. */
export function groupFailures(rows: readonly FailureRow[]): FailureGroup[] {
  const groups = new Map<string, FailureGroup & { streams: string[]; pcodes: number[] }>();
  for (const r of rows) {
    const { error, advice } = splitAdvice(r.error.replace(AUTH_OPERATION, "$1: "));
    const k = `${error}\u0000${advice}`;
    const g = groups.get(k);
    if (!g) {
      const { firstStart, lastEnd, lastFinishedAt, windows } = r;
      groups.set(k, { error, advice, windows, streams: [r.stream], pcodes: [r.pcode], firstStart, lastEnd, lastFinishedAt });
      continue;
    }
    groups.set(k, {
      ...g,
      windows: g.windows + r.windows,
      streams: g.streams.includes(r.stream) ? g.streams : [...g.streams, r.stream].sort(),
      pcodes: g.pcodes.includes(r.pcode) ? g.pcodes : [...g.pcodes, r.pcode].sort((a, b) => a - b),
      firstStart: r.firstStart < g.firstStart ? r.firstStart : g.firstStart,
      lastEnd: r.lastEnd > g.lastEnd ? r.lastEnd : g.lastEnd,
      lastFinishedAt: later(g.lastFinishedAt, r.lastFinishedAt),
    });
  }
  return [...groups.values()].sort((a, b) => b.windows - a.windows || a.error.localeCompare(b.error));
}

function later(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
