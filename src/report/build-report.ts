// From the database's answers to the report model: pure, so the figures are tested without a page.
import { operation } from "../catalogue/index.ts";
import { monthName } from "../windows/months.ts";
import { isGone } from "../windows/types.ts";
import type { CellState, CoverageCell, CoverageShares, ReportModel, RunFigures, StreamFigures } from "./model.ts";
import type { ReportRange } from "./range.ts";
import type { ReportInputs } from "./read-report.ts";
import type { CoverageRow } from "./reads/readCoverage.ts";
import type { RunHistoryEntry } from "./reads/readRunHistory.ts";
import type { StreamSummary } from "./reads/readStreamSummary.ts";

export interface BuildOptions {
  readonly now: number;
  /**
   * Where the synced time ends: a sync stops at now - settle (on the 5-minute grid), so the
   * minutes after that are not due yet and are not shown as missing.
   */
  readonly due: number;
  readonly range: ReportRange;
  readonly projects: readonly number[] | null;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const key = (stream: string, pcode: number) => `${pcode}/${stream}`;
const isoWindow = (w: { windowStart: number; windowEnd: number }) => ({ windowStart: iso(w.windowStart), windowEnd: iso(w.windowEnd) });

export function buildReport(inputs: ReportInputs, opts: BuildOptions): ReportModel {
  const { range, now } = opts;
  const covered = coveredByStream(inputs.coverage);
  const cells = new Map(
    inputs.streams
      .filter((s) => s.windowed)
      .map((s) => [key(s.stream, s.pcode), streamCells(s, covered.get(key(s.stream, s.pcode)), range, opts.due)]),
  );
  return {
    generatedAt: iso(now),
    range: { from: iso(range.from), to: iso(range.to), bucket: range.bucket, projects: opts.projects },
    streams: inputs.streams.map((s) => streamFigures(s, cells.get(key(s.stream, s.pcode)) ?? null, now)),
    coverage: [...cells.values()].flat(),
    runs: inputs.runs.map(runFigures),
    lastVerification: verificationFigures(inputs.lastVerification),
    archives: inputs.archives.map((a) => ({
      table: a.table,
      month: monthName(a.month),
      path: a.path,
      rows: a.rows,
      bytes: a.bytes,
    })),
    topServices: inputs.topServices,
    errorRate: inputs.errorRate.map(({ bucket, ...r }) => ({ ...r, bucketStart: iso(bucket) })),
    visitorsPerDay: inputs.visitors,
    rowsPerTable: rowsPerTable(inputs),
    failedWindows: inputs.failed.rows.map((f) => ({ stream: f.stream, pcode: f.pcode, ...isoWindow(f), error: f.error })),
    truncatedWindows: inputs.truncated.rows.map((t) => ({
      stream: t.stream,
      pcode: t.pcode,
      ...isoWindow(t),
      expected: t.expected,
      fetched: t.fetched,
    })),
    quarantine: inputs.quarantine.rows.map((q) => ({
      stream: q.stream,
      pcode: q.pcode,
      reason: q.reason,
      records: q.records,
      lastAt: iso(q.lastAt),
    })),
    restatements: inputs.restatements.rows.map(({ partition: _, windowStart, windowEnd, detectedAt, ...r }) => ({
      ...r,
      ...isoWindow({ windowStart: windowStart.getTime(), windowEnd: windowEnd.getTime() }),
      detectedAt: detectedAt.toISOString(),
    })),
    totals: {
      failedWindows: inputs.failed.total,
      truncatedWindows: inputs.truncated.total,
      quarantine: inputs.quarantine.total,
      restatements: inputs.restatements.total,
    },
  };
}

function runFigures({ alive, fromLedger, error, windowError, ...r }: RunHistoryEntry): RunFigures {
  // A `running` run whose process is gone will never finish: say so, as `status` does.
  const status = r.status === "running" && !alive ? "interrupted" : r.status;
  return {
    ...r,
    status,
    startedAt: iso(r.startedAt),
    finishedAt: isoOrNull(r.finishedAt),
    countsFrom: fromLedger ? "ledger" : "run",
    reason: runReason(status, error, windowError),
  };
}

/** What the run stored, else what its failed windows say, else that nothing says why. */
export function runReason(status: string, error: string | null, windowError: RunHistoryEntry["windowError"]): string | null {
  if (status === "ok" || status === "running") return null;
  if (error) return error;
  if (windowError)
    return `${windowError.windows.toLocaleString("en")} ${windowError.windows === 1 ? "window" : "windows"} failed: ${windowError.text}`;
  if (status === "interrupted")
    return "the process stopped without finishing (killed, out of memory or the machine went down); the next run catches up on its windows";
  if (status === "cancelled") return "stopped by SIGTERM or SIGINT; the next run catches up on its windows";
  return status === "failed" ? "no reason recorded (an older version, or the process crashed): see the run's log" : null;
}

type Tally = { done: number; truncated: number; failed: number; pruned: number };
type Covered = Map<number, Tally>;
const noTally = (): Tally => ({ done: 0, truncated: 0, failed: 0, pruned: 0 });

function coveredByStream(rows: readonly CoverageRow[]): Map<string, Covered> {
  const out = new Map<string, Covered>();
  for (const r of rows) {
    const k = key(r.stream, r.pcode);
    const buckets = out.get(k) ?? new Map();
    const cell = buckets.get(r.bucket) ?? noTally();
    // Archived time is pruned time whose rows are in Parquet: the heat map shows both alike.
    cell[isGone(r.status) ? "pruned" : r.status] += r.coveredMs;
    buckets.set(r.bucket, cell);
    out.set(k, buckets);
  }
  return out;
}

/**
 * One cell per bucket of the time the stream should have: from its first window (earlier time
 * is not synced yet, not missing) to `due` (later time is not due yet); the buckets at either
 * end count only that part. Every partition of a stream must cover a bucket for it to be complete.
 */
function streamCells(s: StreamSummary, covered: Covered | undefined, range: ReportRange, due: number): CoverageCell[] {
  const cells: CoverageCell[] = [];
  const until = Math.min(range.to, due);
  const since = Math.max(range.from, s.firstWindowStart ?? range.from);
  for (let i = 0, start = range.from; start < until; i++, start += range.bucketMs) {
    const end = Math.min(start + range.bucketMs, until);
    if (end <= since) continue;
    const span = (end - Math.max(start, since)) * Math.max(1, s.partitions);
    const shares = toShares(covered?.get(i) ?? noTally(), span);
    cells.push({ stream: s.stream, pcode: s.pcode, bucketStart: iso(start), ...shares, state: cellState(shares) });
  }
  return cells;
}

function toShares(c: Tally, span: number): CoverageShares {
  // Overlapping ledger rows (a failed window under a later split) must not push the sum past 1.
  const scale = Math.max(span, c.done + c.truncated + c.failed + c.pruned);
  const round = (x: number) => Math.round(x * 10_000) / 10_000;
  const [done, truncated, failed, pruned] = [c.done / scale, c.truncated / scale, c.failed / scale, c.pruned / scale];
  return {
    done: round(done),
    truncated: round(truncated),
    failed: round(failed),
    pruned: round(pruned),
    missing: round(Math.max(0, 1 - done - truncated - failed - pruned)),
  };
}

/**
 * The worst thing in a bucket decides its colour: failed, then truncated, then any missing time;
 * time whose rows `prune` dropped is accounted for, not missing.
 */
export function cellState(s: CoverageShares): CellState {
  if (s.failed > 0) return "failed";
  if (s.truncated > 0) return "truncated";
  if (s.missing >= 0.9999) return "missing";
  if (s.missing > 0) return "partly missing";
  if (s.pruned > 0) return "pruned";
  return "done";
}

function streamFigures(s: StreamSummary, cells: readonly CoverageCell[] | null, now: number): StreamFigures {
  return {
    stream: s.stream,
    pcode: s.pcode,
    windows: { done: s.done, truncated: s.truncated, failed: s.failed, pruned: s.pruned },
    watermark: isoOrNull(s.watermark),
    lagMs: s.watermark === null ? null : Math.max(0, now - s.watermark),
    lastWindowEnd: isoOrNull(s.lastWindowEnd),
    rows: s.rows,
    quarantined: s.quarantined,
    coverage: cells === null ? null : averageShares(cells),
  };
}

// Buckets are equal in length except the current one; weighting it like the others is close
// enough for a headline figure (the cells carry the exact shares).
function averageShares(cells: readonly CoverageShares[]): CoverageShares {
  const n = Math.max(1, cells.length);
  const sum = (k: keyof CoverageShares) => Math.round((cells.reduce((a, c) => a + c[k], 0) / n) * 10_000) / 10_000;
  return { done: sum("done"), truncated: sum("truncated"), failed: sum("failed"), pruned: sum("pruned"), missing: sum("missing") };
}

/** Several streams write one table (the metric series, the visitor granularities): summed. */
function rowsPerTable(inputs: ReportInputs): ReportModel["rowsPerTable"] {
  const sums = new Map<string, { table: string; day: string; rows: number }>();
  for (const r of inputs.rows) {
    const table = tableOf(r.stream);
    const entry = sums.get(`${table}/${r.day}`) ?? { table, day: r.day, rows: 0 };
    entry.rows += r.rows;
    sums.set(`${table}/${r.day}`, entry);
  }
  return [...sums.values()].sort((a, b) => a.table.localeCompare(b.table) || a.day.localeCompare(b.day));
}

/** A stream the catalogue no longer knows (an older version wrote it) keeps its id as the label. */
function tableOf(stream: string): string {
  try {
    return operation(stream).stream?.table ?? stream;
  } catch {
    return stream;
  }
}

function verificationFigures(v: ReportInputs["lastVerification"]): ReportModel["lastVerification"] {
  if (!v) return null;
  const { id, checked, differing, failed } = v;
  return { id, finishedAt: v.finishedAt.toISOString(), from: iso(v.from), to: iso(v.to), checked, differing, failed };
}
