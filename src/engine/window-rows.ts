// One leaf of a fetched window, written a batch at a time: its records parsed, mapped to rows, and
// checked before they reach the table. Refused here, with the reason, into `quarantine`:
// - a second record with the natural key of an earlier one in the same leaf (aggregates): the
//   insert would fail on it, and the window with it, every run; the first is stored;
// - a row whose time (the table's partition column) lies outside the window asked for beyond the
//   table's slack (db/schema: Partitioning.slack): a server's stray timestamp (epoch seconds,
//   9999-12-31, years away) would otherwise make partitions for it, or fail the window every run.

import { parseRecordBatches } from "../api/parse-response.ts";
import type { TxHandle } from "../db/driver/exec.ts";
import type { Scope } from "../db/sqlText.ts";
import { type TableInfo, tableInfo } from "../db/tables.ts";
import type { EncodedRows } from "../db/write/copyRows.ts";
import { insertQuarantine, type QuarantineRow } from "../db/write/insertQuarantine.ts";
import { naturalKey } from "../db/write/naturalKey.ts";
import { readWrittenKeys } from "../db/write/readWrittenKeys.ts";
import type { Row } from "../db/write/row.ts";
import type { RowSink } from "../db/write/rowSink.ts";
import type { Span } from "../windows/intervals.ts";
import { addMonths, monthStart } from "../windows/months.ts";
import type { Leaf } from "./fetch-window.ts";
import { KeyHashes, keyHashOf, keyText } from "./key-hashes.ts";
import { targetScope, toRows } from "./rows.ts";
import type { Target } from "./types.ts";

/** What one leaf wrote. */
export interface LeafTally {
  /** Records the leaf's answer held, after `explode`, quarantined ones included. */
  fetched: number;
  written: number;
  quarantined: number;
  /** Values written with U+FFFD (db/write/cleanText.ts). */
  replaced: number;
}

/** The time a window's rows changed, for its rollups: the window, widened to any row time outside it. */
export interface ChangedSpan {
  fromMs: number;
  toMs: number;
}

/** A window's rows written through `writeLeaf` before its transaction (encode-early.ts): encoded, counted and spanned. */
export interface EarlyRows {
  readonly rows: EncodedRows;
  readonly tallies: readonly LeafTally[];
  readonly span: ChangedSpan;
}

/**
 * The range a row's partition time may take for `window`, and the months whose partitions a write
 * of it may need (those of the window widened by the table's slack); null bounds for a table
 * whose rows take their time from the window itself, or that is not partitioned.
 */
export function rowTimeBounds(table: string, window: Span): { readonly bounds: Span | null; readonly months: number[] } {
  const info = tableInfo(table);
  if (info.partitionColumn === null || info.slack === null) return { bounds: null, months: [] };
  const fromWindow = info.window.includes(info.partitionColumn);
  const bounds = fromWindow ? window : { start: window.start - info.slack.before, end: window.end + info.slack.after };
  const months: number[] = [];
  for (let m = monthStart(bounds.start); m < bounds.end; m = addMonths(m, 1)) months.push(m);
  return { bounds: fromWindow ? null : bounds, months };
}

/**
 * Writes the records of `leaf` through `sink`, quarantining what cannot be stored as it came.
 * `staged`: a dry write into that (quoted) staging table (`verify`): the duplicate check reads it,
 * and what is refused is counted, not quarantined.
 */
export async function writeLeaf(
  tx: TxHandle,
  target: Target,
  window: Span,
  leaf: Leaf,
  sink: RowSink,
  runId: number | null,
  span: ChangedSpan,
  staged?: string,
): Promise<LeafTally> {
  const info = tableInfo(target.stream.table);
  const check = new RowCheck(target, info, window, leaf, staged);
  const tally: LeafTally = { fetched: 0, written: 0, quarantined: 0, replaced: 0 };
  const where = { runId, stream: target.op.id, pcode: target.pcode, windowStart: leaf.start, windowEnd: leaf.end };
  for (const batch of parseRecordBatches(target.op, leaf.page, leaf.envelope)) {
    const rows = toRows(target, batch.records, { runId, windowStart: leaf.start, windowEnd: leaf.end });
    const refused: QuarantineRow[] = batch.quarantined.map((q) => ({ ...where, recordIndex: q.index, raw: q.raw, reason: q.reason }));
    const refuse = (row: Row, reason: string) => refused.push({ ...where, recordIndex: null, raw: row, reason });
    const kept = await check.filter(tx, rows, refuse, () => sink.flush());
    check.widen(kept, span);
    tally.fetched += batch.records.length + batch.quarantined.length;
    tally.written += kept.length;
    tally.quarantined += refused.length;
    // Encoded before its promise returns: the batch's rows can go then.
    if (kept.length > 0) await sink.write(kept);
    if (refused.length > 0 && staged === undefined) tally.replaced += (await insertQuarantine(tx, refused)).replaced;
  }
  return tally;
}

/** The leaves of a window written through `sink` (writeLeaf), in order: their tallies. */
export async function writeLeaves(
  tx: TxHandle,
  target: Target,
  window: Span,
  leaves: readonly Leaf[],
  sink: RowSink,
  runId: number | null,
  span: ChangedSpan,
): Promise<LeafTally[]> {
  const tallies: LeafTally[] = [];
  for (const leaf of leaves) tallies.push(await writeLeaf(tx, target, window, leaf, sink, runId, span));
  return tallies;
}

const DUPLICATE = (key: readonly string[]) =>
  `duplicate record: same ${key.join(", ")} as an earlier record of this window (the first is stored)`;

/** The checks of one leaf's rows (see the header). */
class RowCheck {
  readonly #table: string;
  readonly #recordKey: readonly string[] | null;
  readonly #hashes = new KeyHashes();
  readonly #where: { readonly pcode: number; readonly start: number; readonly end: number; readonly scope: Scope };
  readonly #column: string | null;
  readonly #bounds: Span | null;
  readonly #staged: string | undefined;

  constructor(target: Target, info: TableInfo, window: Span, leaf: Span, staged: string | undefined) {
    this.#table = info.name;
    this.#staged = staged;
    // Within a leaf pcode and the window are the same on every row: only the record key is compared.
    const aggregate = target.stream.kind === "aggregate";
    this.#recordKey = aggregate ? naturalKey(info.name).filter((k) => !info.window.includes(k)) : null;
    this.#where = { pcode: target.pcode, start: leaf.start, end: leaf.end, scope: targetScope(target) };
    this.#bounds = rowTimeBounds(info.name, window).bounds;
    this.#column = this.#bounds ? info.partitionColumn : null;
  }

  /** The rows that pass; `refuse` gets the others with why. `flush` sends the rows kept so far to the table. */
  async filter(tx: TxHandle, rows: readonly Row[], refuse: (row: Row, reason: string) => void, flush: () => Promise<void>): Promise<Row[]> {
    const key = this.#recordKey;
    const kept: Row[] = [];
    // The texts of this batch's keys, made only once a hash repeats (rare: a duplicate, a key of an
    // earlier batch, a collision); until then a new hash says the key is new to the leaf.
    let inBatch: Set<string> | null = null;
    const candidates: Row[] = [];
    for (const row of rows) {
      const reason = this.#timeProblem(row);
      if (reason !== null) refuse(row, reason);
      else if (key === null) kept.push(row);
      else if (this.#hashes.add(keyHashOf(row, key))) {
        inBatch?.add(keyText(row, key));
        kept.push(row);
      } else {
        inBatch ??= new Set(kept.map((r) => keyText(r, key)));
        const text = keyText(row, key);
        if (inBatch.has(text)) refuse(row, DUPLICATE(key));
        else {
          inBatch.add(text);
          candidates.push(row);
          kept.push(row);
        }
      }
    }
    if (key === null || candidates.length === 0) return kept;
    // Keys whose hash was seen before: duplicates only if an earlier batch stored them.
    await flush();
    const stored = new Set(
      (await readWrittenKeys(tx, this.#table, this.#where, key, candidates, this.#staged)).map((r) => keyText(r, key)),
    );
    if (stored.size === 0) return kept;
    const suspects = new Set(candidates);
    return kept.filter((row) => {
      const dup = suspects.has(row) && stored.has(keyText(row, key));
      if (dup) refuse(row, DUPLICATE(key));
      return !dup;
    });
  }

  /** Widens `span` to the kept rows' times outside it. */
  widen(rows: readonly Row[], span: ChangedSpan): void {
    if (this.#column === null) return;
    for (const row of rows) {
      const ms = msOf(row[this.#column]);
      if (ms < span.fromMs) span.fromMs = ms;
      if (ms >= span.toMs) span.toMs = ms + 1;
    }
  }

  #timeProblem(row: Row): string | null {
    if (this.#column === null || this.#bounds === null) return null;
    const ms = msOf(row[this.#column]);
    const { start, end } = this.#bounds;
    if (ms >= start && ms < end) return null;
    const at = Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(row[this.#column]);
    return `${this.#column} ${at} lies outside the window asked for (kept from ${iso(start)} to ${iso(end)}); not stored`;
  }
}

function msOf(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  return Number.NaN;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
