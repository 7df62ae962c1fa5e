// Commit, then advance, in ONE transaction (STYLE rule 3): the window's rows, its quarantined
// records, its ledger rows and the watermark. A crash leaves the whole window or nothing.
import { advanceWatermark } from "../db/advanceWatermark.ts";
import { clearLedgerRange } from "../db/clearLedgerRange.ts";
import { clearQuarantineRange } from "../db/clearQuarantineRange.ts";
import type { Row } from "../db/copyRows.ts";
import type { SqlHandle, TxHandle } from "../db/exec.ts";
import { insertQuarantine, type QuarantineRow } from "../db/insertQuarantine.ts";
import { naturalKey } from "../db/naturalKey.ts";
import { type LedgerRow, recordWindow } from "../db/recordWindow.ts";
import { refreshRollups } from "../db/refreshRollups.ts";
import { replaceWindowRows } from "../db/replaceWindowRows.ts";
import { rollupOf } from "../db/rollups.ts";
import type { Scope } from "../db/sqlText.ts";
import { tableInfo } from "../db/tables.ts";
import { upsertRows } from "../db/upsertRows.ts";
import { HOUR_MS } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import type { Leaf, WindowFetch } from "./fetch-window.ts";
import { paramValues, splitDuplicates, toRows } from "./rows.ts";
import type { Target } from "./types.ts";

export interface WindowWrite {
  readonly rows: number;
  readonly quarantined: number;
  readonly truncated: number;
  /** Values written with U+FFFD for text the database cannot hold (db/cleanText.ts). */
  readonly replaced: number;
}

/**
 * Writes a fetched grain window: aggregates REPLACE the rows of the window (and of its earlier
 * sub-windows), points are upserted by their key. `watermark` computes the new watermark from
 * the ledger including these leaves; it is written only if it moves forward.
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
  const content = windowContent(target, window, fetched, runId);
  const { quarantined, rowCount } = content;
  // The quarantine's COPY goes first, on its own (it is rare): a COPY must be the last statement
  // of a pipelined batch (a connection in copy-in mode takes nothing else).
  const clearQuarantine = () => clearQuarantineRange(tx, op.id, target.pcode, window.start, window.end);
  let replaced = 0;
  if (quarantined.length > 0) {
    const [, copied] = await Promise.all([clearQuarantine(), insertQuarantine(tx, quarantined)]);
    replaced += copied.replaced;
  }
  // Then one pipelined batch: the ledger and the rows leave together and the server runs them in
  // order on the transaction's connection, one round trip instead of one per statement.
  const batch: Promise<unknown>[] = quarantined.length > 0 ? [] : [clearQuarantine()];
  batch.push(clearLedgerRange(tx, op.id, target.pcode, target.partition, window.start, window.end));
  for (const row of content.ledger) batch.push(recordWindow(tx, row));
  // The rows' COPY goes last (see above).
  const writing =
    stream.kind === "aggregate"
      ? replaceWindowRows(tx, stream.table, content.columns, target.pcode, window.start, window.end, content.rows, content.scope)
      : upsertRows(tx, stream.table, content.columns, naturalKey(stream.table), content.rows);
  // Encoded by now (copyRows): let the rows go. Kept until the commit, they outlived the young
  // generation and raised the 8-day bench's peak RSS by 15-20 MiB.
  content.rows.length = 0;
  const [written] = await Promise.all([writing, ...batch]);
  replaced += written.replaced;
  // Then the rollups of the buckets the rows touched, and the watermark last, once they are done:
  // its row is shared by the stream's windows in flight, and the row lock taken here is held until
  // the commit (before the COPY it serialised every window of the stream). A window that takes
  // the rollups' turn decides so only after its hours are written (refreshRollups.ts): holding the
  // watermark's row while it waits for the turn, it would deadlock with the holder of the turn.
  const wholeHours = fetched.leaves.every((l) => l.start % HOUR_MS === 0 && l.end - l.start >= HOUR_MS);
  const change = { table: stream.table, pcode: target.pcode, scope: content.scope, stream: op.id, ...content.span, wholeHours };
  if (rollups) await refreshRollups(tx, change);
  const next = watermark(fetched.leaves);
  if (next !== null) await advanceWatermark(tx, op.id, target.pcode, target.partition, next);
  return { rows: rowCount, quarantined: quarantined.length, truncated: fetched.leaves.filter((l) => l.truncated).length, replaced };
}

/** What a window writes: its rows, its quarantined records and its ledger rows. */
interface WindowContent {
  readonly columns: readonly string[];
  /** Scope of an aggregate's replace: the stream's constants and its partition's inputs. */
  readonly scope: Scope;
  readonly rows: Row[];
  readonly rowCount: number;
  readonly quarantined: QuarantineRow[];
  readonly ledger: LedgerRow[];
  /**
   * The time the write changed: the whole window (its rows are replaced, even where a short answer
   * left part of it unanswered), widened to any row time outside it.
   */
  readonly span: { readonly fromMs: number; readonly toMs: number };
}

function windowContent(target: Target, window: Span, fetched: WindowFetch, runId: number | null): WindowContent {
  const { stream } = target;
  const info = tableInfo(stream.table);
  const columns = info.writable;
  // Two records with the same natural key in one window would break the insert (and the window,
  // every run): the first is kept, the others are quarantined with the reason. Points are
  // upserted: a repeated point simply wins. Within a leaf pcode and the window are the same on
  // every row: only the record key is compared.
  const recordKey = naturalKey(stream.table).filter((k) => !info.window.includes(k));
  const aggregate = stream.kind === "aggregate";
  const perLeaf = fetched.leaves.map((leaf) => {
    const all = toRows(target, leaf.records, { runId, windowStart: leaf.start, windowEnd: leaf.end });
    return aggregate ? splitDuplicates(all, recordKey) : { unique: all, duplicates: [] };
  });
  const duplicate = `duplicate record: same ${recordKey.join(", ")} as an earlier record of this window (the first is stored)`;
  const scope = { ...stream.constants, ...paramValues(target) };
  const rows = perLeaf.flatMap((p) => p.unique);
  return {
    // pcode and the scope columns of an aggregate are written by the replace (its constants).
    columns: aggregate ? columns.filter((c) => c !== "pcode" && !(c in scope)) : columns,
    scope,
    rows,
    span: rowsSpan(rows, rollupOf(stream.table)?.time, window, info.window),
    rowCount: rows.length,
    quarantined: fetched.leaves.flatMap((leaf, i) => {
      const where = { runId, stream: target.op.id, pcode: target.pcode, windowStart: leaf.start, windowEnd: leaf.end };
      return [
        ...leaf.quarantined.map((q) => ({ ...where, recordIndex: q.index, raw: q.raw, reason: q.reason })),
        ...perLeaf[i]!.duplicates.map((row) => ({ ...where, recordIndex: null, raw: row, reason: duplicate })),
      ];
    }),
    ledger: perLeaf.map((rows, i) => ledgerRow(target, fetched, i, rows, runId)),
  };
}

/**
 * The window, widened to the rows' values of `column` (a point may lie outside its window; a
 * window column, set from the leaf, never does).
 */
function rowsSpan(
  rows: readonly Row[],
  column: string | undefined,
  window: Span,
  windowColumns: readonly string[],
): { fromMs: number; toMs: number } {
  let fromMs = window.start;
  let toMs = window.end;
  if (column === undefined || windowColumns.includes(column)) return { fromMs, toMs };
  for (const row of rows) {
    const v = row[column];
    const ms = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Number.NaN;
    if (!Number.isFinite(ms)) continue;
    if (ms < fromMs) fromMs = ms;
    if (ms >= toMs) toMs = ms + 1;
  }
  return { fromMs, toMs };
}

/** The ledger row of leaf `i` of a fetched window. */
function ledgerRow(
  target: Target,
  fetched: WindowFetch,
  i: number,
  rows: { unique: Row[]; duplicates: Row[] },
  runId: number | null,
): LedgerRow {
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
    rowsFetched: leaf.fetched,
    rowsWritten: rows.unique.length,
    requests: first ? fetched.requests : 0,
    retries: first ? fetched.retries : 0,
    splits: first ? fetched.splits : 0,
    quarantined: leaf.quarantined.length + rows.duplicates.length,
    runId,
  };
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
