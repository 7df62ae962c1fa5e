// Commit, then advance, in ONE transaction (STYLE rule 3): the window's rows, its quarantined
// records, its ledger rows and the watermark. A crash leaves the whole window or nothing.
import { advanceWatermark } from "../db/advanceWatermark.ts";
import { clearLedgerRange } from "../db/clearLedgerRange.ts";
import { clearQuarantineRange } from "../db/clearQuarantineRange.ts";
import type { SqlHandle, TxHandle } from "../db/exec.ts";
import { naturalKey } from "../db/naturalKey.ts";
import { type LedgerRow, recordWindow } from "../db/recordWindow.ts";
import { refreshRollups } from "../db/refreshRollups.ts";
import { openRowSink, type RowSink } from "../db/rowSink.ts";
import { tableInfo } from "../db/tables.ts";
import { clearInFlight, type WindowKey } from "../db/windowsInFlight.ts";
import { HOUR_MS } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import type { Leaf, WindowFetch } from "./fetch-window.ts";
import { paramValues } from "./rows.ts";
import type { Target } from "./types.ts";
import { type LeafTally, writeLeaf } from "./window-rows.ts";

export interface WindowWrite {
  readonly rows: number;
  readonly quarantined: number;
  readonly truncated: number;
  /** Values written with U+FFFD for text the database cannot hold (db/cleanText.ts). */
  readonly replaced: number;
}

/**
 * Writes a fetched grain window: aggregates REPLACE the rows of the window (and of its earlier
 * sub-windows), points are upserted by their key. The leaves' records are read, parsed and
 * written a batch at a time (window-rows.ts). `watermark` computes the new watermark from the
 * ledger including these leaves; it is written only if it moves forward.
 */
export async function writeWindow(
  tx: TxHandle,
  target: Target,
  window: Span,
  fetched: WindowFetch,
  runId: number | null,
  watermark: (leaves: readonly Leaf[]) => number | null,
  rollups = true,
): Promise<WindowWrite> {
  const { stream, op } = target;
  // Pipelined, in this order (db/exec.ts PIPELINING): the window's earlier quarantine and ledger
  // rows go, then its rows (the sink's first statement), then the batches' COPYs.
  const clearing = Promise.all([
    clearQuarantineRange(tx, op.id, target.pcode, window.start, window.end),
    clearLedgerRange(tx, op.id, target.pcode, target.partition, window.start, window.end),
    clearInFlight(tx, windowKey(target, window)),
  ]);
  clearing.catch(() => {});
  const sink = openWindowSink(tx, target, window);
  const span = { fromMs: window.start, toMs: window.end };
  const tallies: LeafTally[] = [];
  for (const leaf of fetched.leaves) tallies.push(await writeLeaf(tx, target, window, leaf, sink, runId, span));
  await clearing;
  const written = await sink.finish();
  await Promise.all(tallies.map((tally, i) => recordWindow(tx, ledgerRow(target, fetched, i, tally, runId))));
  // Then the rollups of the buckets the rows touched, and the watermark last, once they are done:
  // its row is shared by the stream's windows in flight, and the row lock taken here is held until
  // the commit (before the COPY it serialised every window of the stream). A window that takes
  // the rollups' turn decides so only after its hours are written (refreshRollups.ts): holding the
  // watermark's row while it waits for the turn, it would deadlock with the holder of the turn.
  const wholeHours = fetched.leaves.every((l) => l.start % HOUR_MS === 0 && l.end - l.start >= HOUR_MS);
  const scope = { ...stream.constants, ...paramValues(target) };
  const change = { table: stream.table, pcode: target.pcode, scope, stream: op.id, ...span, wholeHours };
  if (rollups) await refreshRollups(tx, change);
  const next = watermark(fetched.leaves);
  if (next !== null) await advanceWatermark(tx, op.id, target.pcode, target.partition, next);
  const sum = (f: (t: LeafTally) => number) => tallies.reduce((n, t) => n + f(t), 0);
  return {
    rows: sum((t) => t.written),
    quarantined: sum((t) => t.quarantined),
    truncated: fetched.leaves.filter((l) => l.truncated).length,
    replaced: written.replaced + sum((t) => t.replaced),
  };
}

/** Where a window's rows go: an aggregate's replace its window, points are upserted by key. */
function openWindowSink(tx: TxHandle, target: Target, window: Span): RowSink {
  const { stream } = target;
  const info = tableInfo(stream.table);
  if (stream.kind !== "aggregate") return openRowSink(tx, stream.table, info.writable, { kind: "upsert", key: naturalKey(stream.table) });
  // pcode and the scope columns of an aggregate are written by the replace (its constants): the
  // stream's constants and its partition's inputs.
  const scope = { ...stream.constants, ...paramValues(target) };
  const columns = info.writable.filter((c) => c !== "pcode" && !(c in scope));
  return openRowSink(tx, stream.table, columns, { kind: "replace", pcode: target.pcode, start: window.start, end: window.end, scope });
}

/** The ledger row of leaf `i` of a fetched window. */
function ledgerRow(target: Target, fetched: WindowFetch, i: number, tally: LeafTally, runId: number | null): LedgerRow {
  const leaf = fetched.leaves[i]!;
  // Request counters of the whole split go on the first leaf so that sums stay exact.
  const first = i === 0;
  return {
    stream: target.op.id,
    pcode: target.pcode,
    partition: target.partition,
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
    runId,
  };
}

function windowKey(target: Target, w: Span): WindowKey {
  return { stream: target.op.id, pcode: target.pcode, partition: target.partition, start: w.start, end: w.end };
}

/** Records a window that could not be fetched; its earlier rows (if any) stay untouched. */
export async function recordFailedWindow(
  tx: SqlHandle,
  target: Target,
  window: Span,
  error: string,
  counts: { requests: number; retries: number },
  runId: number | null,
) {
  await clearInFlight(tx, windowKey(target, window), runId);
  await recordWindow(tx, {
    stream: target.op.id,
    pcode: target.pcode,
    partition: target.partition,
    windowStart: window.start,
    windowEnd: window.end,
    status: "failed",
    error: error.slice(0, 2000),
    requests: counts.requests,
    retries: counts.retries,
    runId,
  });
}
