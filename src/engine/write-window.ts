// Commit, then advance, in ONE transaction (docs/design.md "Ledger and watermarks"): the window's rows, its quarantined
// records, its ledger rows, the marks of the rollup hours it changed, the watermark, and a
// restatement when a window stored before came back different (db/history/restatements.ts). A
// transaction may hold several windows of a target (run-windowed.ts): a crash leaves each whole or
// absent. The rollups themselves are refreshed after the run
// (db/rollups/refresh.ts); the views are exact meanwhile.
import { Pipeline, type SqlHandle, type TxHandle } from "../db/driver/exec.ts";
import { type DigestedWindow, recordRestatement } from "../db/history/restatements.ts";
import { clearWindow, type LedgerRow, type RollupMarks, recordWindows, type StoredWindow } from "../db/ledger/windowStatements.ts";
import { clearInFlight, type WindowKey } from "../db/ledger/windowsInFlight.ts";
import { rollupOf } from "../db/rollups/spec.ts";
import { tableInfo } from "../db/tables.ts";
import { naturalKey } from "../db/write/naturalKey.ts";
import { openRowSink, type RowSink, type SinkResult } from "../db/write/rowSink.ts";
import type { Span } from "../windows/intervals.ts";
import type { WindowFetch } from "./fetch-window.ts";
import { targetScope } from "./rows.ts";
import type { Target } from "./types.ts";
import { type EarlyRows, type LeafTally, writeLeaves } from "./window-rows.ts";

export interface WindowWrite {
  readonly rows: number;
  readonly quarantined: number;
  readonly truncated: number;
  /** Values written with U+FFFD for text the database cannot hold (db/write/cleanText.ts). */
  readonly replaced: number;
}

/** A fetched window of a target, to be written. */
export interface FetchedWindow {
  readonly window: Span;
  readonly fetched: WindowFetch;
  /** Its rows, encoded as its answers arrived (encode-early.ts); null: written from its answers here. */
  readonly early: EarlyRows | null;
}

/**
 * Writes fetched grain windows of one target in the caller's transaction, one after the other:
 * aggregates REPLACE the rows of each window (and of its earlier sub-windows), points are upserted
 * by their key. The leaves' records are read, parsed and written a batch at a time
 * (window-rows.ts). Last come the windows' ledger rows, rollup marks and the watermark, in one
 * statement: `watermark` computes it from the ledger including these windows; it is written only
 * if it moves forward.
 */
export async function writeWindows(
  tx: TxHandle,
  target: Target,
  windows: readonly FetchedWindow[],
  runId: number | null,
  watermark: () => number | null,
): Promise<WindowWrite[]> {
  // Statements marked "pipelined" below are settled after the last one: none is waited for alone.
  const sent = new Pipeline();
  const written: WrittenRows[] = [];
  for (const w of windows) written.push(await writeRows(tx, sent, target, w, runId));
  // One statement for all of them. The watermark's row is shared by the stream's transactions in
  // flight: its row lock, taken last, is held until the commit.
  await recordWindows(tx, {
    window: { stream: target.op.id, pcode: target.pcode, partition: target.partition },
    runId,
    ledger: written.flatMap((w) => w.ledger),
    marks: rollupMarks(
      target,
      written.map((w) => w.span),
    ),
    watermark: watermark(),
  });
  await sent.settle();
  return written.map((w) => w.write);
}

/** What one window's rows wrote, its ledger rows, and the time its rows changed (its rollup marks). */
interface WrittenRows {
  readonly write: WindowWrite;
  readonly ledger: readonly LedgerRow[];
  readonly span: { readonly fromMs: number; readonly toMs: number };
}

/**
 * The rows of one window, and what its ledger will record. Its statements, in the order they are
 * sent (after the lock's confirmation, which db-step.ts lockedWrite sends first); those marked
 * "pipelined" go through `sent`, not waited for before the next.
 */
async function writeRows(
  tx: TxHandle,
  sent: Pipeline,
  target: Target,
  { window, fetched, early }: FetchedWindow,
  runId: number | null,
): Promise<WrittenRows> {
  const span = early?.span ?? { fromMs: window.start, toMs: window.end };
  const replaced = replacedWindow(target, window);
  // 1. (pipelined) The ledger rows an earlier fetch of these times recorded go; they tell how it was stored.
  const stored = sent.send(clearWindow(tx, windowKey(target, window)));
  // 2. (pipelined) The window's earlier rows go, digested (an aggregate), or an upsert's staging table is made.
  const sink = openWindowSink(tx, target, replaced, early);
  // 3. The rows: encoded already, or a COPY per few hundred KiB of each leaf's records, the quarantined records beside them.
  const tallies = early?.tallies ?? (await writeLeaves(tx, target, window, fetched.leaves, sink, runId, span));
  // 4. An upsert's staged rows go into the table; a replace's digest of what it deleted is read.
  const written = await sink.finish();
  // 5. (pipelined) A restatement, when the window was stored before and came back different.
  if (replaced) sent.send(restatement(tx, target, replaced, written, await stored, fetched.leaves, runId));
  const sum = (f: (t: LeafTally) => number) => tallies.reduce((n, t) => n + f(t), 0);
  const write = {
    rows: sum((t) => t.written),
    quarantined: sum((t) => t.quarantined),
    truncated: fetched.leaves.filter((l) => l.truncated).length,
    replaced: written.replaced + sum((t) => t.replaced),
  };
  // 6. Recorded by the caller: the ledger rows of its leaves, and the span `span` (widened to any row outside the window).
  return { write, ledger: tallies.map((tally, i) => ledgerRow(target, fetched, i, tally)), span };
}

/** The key of window `w` of a target (ledger, in-flight note). */
export function windowKey(target: Target, w: Span): WindowKey {
  return { stream: target.op.id, pcode: target.pcode, partition: target.partition, start: w.start, end: w.end };
}

/** The rollup hours a write of the stream's table changed over `spans`; null for a table without rollups. */
function rollupMarks(target: Target, spans: readonly { fromMs: number; toMs: number }[]): RollupMarks | null {
  const spec = rollupOf(target.stream.table);
  return spec ? { source: spec.source, spans } : null;
}

/**
 * The window an aggregate's replace deletes, digesting what it deletes, and a restatement compares
 * with (db/history/restatements.ts): its scope (pcode and these columns are written by the replace,
 * its constants) is the stream's constants and its partition's inputs. null for points (upserted).
 */
export function replacedWindow(target: Target, window: Span): DigestedWindow | null {
  const { stream } = target;
  if (stream.kind !== "aggregate") return null;
  return {
    info: tableInfo(stream.table),
    pcode: target.pcode,
    start: new Date(window.start),
    end: new Date(window.end),
    scope: targetScope(target),
    measure: stream.measure ?? null,
  };
}

/** Where a window's rows go: an aggregate's replace its window (digesting what it deletes), points are upserted by key. */
function openWindowSink(tx: TxHandle, target: Target, replaced: DigestedWindow | null, early: EarlyRows | null): RowSink {
  const { table } = target.stream;
  if (!replaced) return openRowSink(tx, table, tableInfo(table).writable, { kind: "upsert", key: naturalKey(table) });
  const { pcode, start, end, scope, measure } = replaced;
  const mode = { kind: "replace", pcode, start, end, scope, digest: { measure } } as const;
  return openRowSink(tx, table, replacedColumns(replaced), early ? { ...mode, early: early.rows } : mode);
}

/** The columns each row of a replaced window is COPYed with: pcode and the scope are constants. */
export function replacedColumns(replaced: DigestedWindow): string[] {
  return replaced.info.writable.filter((c) => c !== "pcode" && !(c in replaced.scope));
}

/**
 * A window stored before whose rows now differ: one restatement row, sent before the ledger record
 * (pipelined). Stored before: the ledger had the whole window done (an empty answer too), or rows
 * spanning it were replaced (its ledger rows reset). Nothing to send for a first fetch, nor for a
 * window of which a part was stored (the short last window of an incremental run, fetched whole by
 * the next): that part answered another window. Fetched in the same pieces as stored, the rows are
 * compared by content; in other pieces (a lower record cap split it, another grain) an unchanged
 * answer has other rows (aggregates per piece), so only the stream's measure over the window tells.
 */
async function restatement(
  tx: TxHandle,
  target: Target,
  replaced: DigestedWindow,
  written: SinkResult,
  stored: StoredWindow,
  leaves: readonly Span[],
  runId: number | null,
): Promise<void> {
  const { before } = written;
  if (!before || !(stored.whole || before.whole)) return;
  const by = samePieces(stored.pieces, leaves) ? "content" : "measure";
  if (by === "measure" && replaced.measure === null) return;
  await recordRestatement(tx, replaced, { stream: target.op.id, partition: target.partition, runId }, before, by);
}

export function samePieces(a: readonly Span[], b: readonly Span[]): boolean {
  return a.length === b.length && a.every((p, i) => p.start === b[i]!.start && p.end === b[i]!.end);
}

/** The ledger row of leaf `i` of a fetched window. */
function ledgerRow(target: Target, fetched: WindowFetch, i: number, tally: LeafTally): LedgerRow {
  const leaf = fetched.leaves[i]!;
  // Request counters of the whole split go on the first leaf so that sums stay exact.
  const first = i === 0;
  return {
    windowStart: leaf.start,
    windowEnd: leaf.end,
    status: leaf.truncated ? "truncated" : "done",
    expectedTotal: leaf.expected,
    // Truncation streams do not flatten records: their count is the server's own (the leaf's).
    rowsFetched: target.stream.truncation ? leaf.fetched : tally.fetched,
    rowsWritten: tally.written,
    requests: first ? fetched.requests : 0,
    retries: first ? fetched.retries : 0,
    splits: first ? fetched.splits : 0,
    quarantined: tally.quarantined,
  };
}

/**
 * Records a window that could not be fetched; its earlier rows (if any) stay untouched, its rollup
 * hours are marked (the ledger's coverage of them changed). Its in-flight note goes, unless it was
 * left by a run that died (it counts the window's crashes: db/ledger/windowsInFlight.ts).
 */
export async function recordFailedWindow(
  tx: SqlHandle,
  target: Target,
  window: Span,
  error: string,
  counts: { requests: number; retries: number },
  runId: number | null,
) {
  await clearInFlight(tx, windowKey(target, window), runId);
  await recordWindows(tx, {
    window: windowKey(target, window),
    runId,
    ledger: [{ windowStart: window.start, windowEnd: window.end, status: "failed", error: error.slice(0, 2000), ...counts }],
    marks: rollupMarks(target, [{ fromMs: window.start, toMs: window.end }]),
    watermark: null,
  });
}
