// The one way a write's rows reach their table, a batch at a time, inside the caller's
// transaction: so a window of any size is written with one batch in memory.
// - replace (windowed aggregates, docs/design.md "Streams"): the window's rows (and those of every
//   sub-window inside it) are deleted first, then each batch is COPYed in;
// - upsert (points, dimensions): each batch is COPYed into a staging table, and one statement
//   upserts them by natural key at the end, the last row of a key winning;
// - stage (`verify`): each batch is COPYed into a temporary table of the table's columns, for the
//   caller to compare with the stored rows; the table itself is not touched.

import { execute, pipelined, type TxHandle, toDate } from "../driver/exec.ts";
import { deleteWithDigest, type WindowDigest } from "../history/restatements.ts";
import { deleteMovedFromStaged, deleteWindow, quoteIdent, type Scope, upsertFromStaged } from "../sqlText.ts";
import { type TableInfo, type TableRef, tableInfo } from "../tables.ts";
import { CopyWriter, copyShape, EncodedRows } from "./copyRows.ts";
import type { Row } from "./row.ts";

export type SinkMode =
  | {
      readonly kind: "replace";
      readonly pcode: number | bigint;
      readonly start: Date | number;
      readonly end: Date | number;
      /** Columns shared by every row that also limit what is deleted (e.g. `{ time_merge: "avg" }`). */
      readonly scope?: Scope;
      /** Digest the deleted rows (summing this measure column, or none: null), for a restatement (db/history/restatements.ts). */
      readonly digest?: { readonly measure: string | null };
      /** The window's rows, encoded before the transaction (`encodingSink`): COPYed after the delete, before any written. */
      readonly early?: EncodedRows;
    }
  | {
      readonly kind: "upsert";
      readonly key: readonly string[];
      /** Columns shared by every row, sent once as parameters; key columns may be among them. */
      readonly constants?: Scope;
    }
  | {
      readonly kind: "stage";
      /** The (quoted) temporary table to create, dropped at the end of the transaction. */
      readonly table: string;
      readonly constants: Scope;
    };

export interface SinkResult {
  /** Rows inserted (replace), or inserted or updated (upsert). */
  readonly written: number;
  /** Rows of the window deleted first (replace). */
  readonly deleted: number;
  /** Values written with U+FFFD for text the database cannot hold (cleanText.ts). */
  readonly replaced: number;
  /** The staging table holding every upserted row, and how many (upsert): a soft delete reads the present keys from it. */
  readonly staged: { readonly name: string; readonly rows: number } | null;
  /** The digest of the rows a replace deleted, when its mode asked for one. */
  readonly before?: WindowDigest;
}

export interface RowSink {
  /**
   * Writes a batch: encoded before the promise is returned (the caller may let the rows go), and
   * COPYed with later batches (db/write/copyRows.ts CopyWriter) unless they reach its size.
   */
  write(rows: readonly Row[]): Promise<void>;
  /** Sends the rows written so far: a statement that reads them from the table comes after this. */
  flush(): Promise<void>;
  /** Ends the write (the upsert runs here) and says what it did. */
  finish(): Promise<SinkResult>;
}

/** Where an upsert's rows are staged: its columns plus their order of arrival. */
export const ORDER_COLUMN = "apm_ord";
let staged = 0;

/**
 * Opens a write of `columns` (per-row columns, database names) into `table`. Its first statement
 * (the delete of a replace, the staging table of an upsert) is sent at once, pipelined after the
 * statements made before it (exec.ts PIPELINING).
 */
export function openRowSink(tx: TxHandle, table: TableRef, columns: readonly string[], mode: SinkMode): RowSink {
  const info = tableInfo(table);
  if (mode.kind === "stage") return stageSink(tx, info, columns, mode);
  return mode.kind === "replace" ? replaceSink(tx, info, columns, mode) : upsertSink(tx, info, columns, mode);
}

function stageSink(tx: TxHandle, info: TableInfo, columns: readonly string[], mode: Extract<SinkMode, { kind: "stage" }>): RowSink {
  // Every column of the table, without its constraints or defaults: what a row's digest reads.
  const defs = [...info.types].map(([c, type]) => `${quoteIdent(c)} ${type}`).join(", ");
  const creating = pipelined(tx.unsafe(`CREATE TEMP TABLE ${mode.table} (${defs}) ON COMMIT DROP`).execute());
  const copy = new CopyWriter(tx, copyShape(info, columns, { constants: mode.constants, table: mode.table }));
  return {
    write: (rows) => copy.write(rows),
    flush: () => copy.flush(),
    finish: async () => {
      await copy.flush();
      await creating;
      const { rows, replaced } = copy.copied();
      return { written: rows, deleted: 0, replaced, staged: { name: mode.table, rows } };
    },
  };
}

/** Where a replace's rows go, checked once for both ways of writing them. */
function replaceShape(info: TableInfo, columns: readonly string[], mode: Extract<SinkMode, { kind: "replace" }>) {
  const start = toDate(mode.start);
  const end = toDate(mode.end);
  const scope = mode.scope ?? {};
  if (start >= end) throw new RangeError(`${info.name}: empty window ${start.toISOString()} .. ${end.toISOString()}`);
  const ownWindows = columns.includes("window_start") && columns.includes("window_end");
  if (!ownWindows && (columns.includes("window_start") || columns.includes("window_end"))) {
    throw new Error(`${info.name}: rows carry their own window only with both window_start and window_end`);
  }
  const constants = ownWindows ? { pcode: mode.pcode, ...scope } : { pcode: mode.pcode, window_start: start, window_end: end, ...scope };
  const check = (rows: readonly Row[]) => ownWindows && assertInside(info.name, rows, start, end);
  return { start, end, scope, constants, check };
}

function replaceSink(tx: TxHandle, info: TableInfo, columns: readonly string[], mode: Extract<SinkMode, { kind: "replace" }>): RowSink {
  const { start, end, scope, constants, check } = replaceShape(info, columns, mode);
  // One statement either way: with a digest, the delete answers it (the window's first fetch deletes nothing).
  const digesting = mode.digest ? deleteWithDigest(tx, { info, pcode: mode.pcode, start, end, scope, measure: mode.digest.measure }) : null;
  // Settled by finish(); a failure of the transaction before then is the caller's to see.
  const deleting = pipelined(digesting ? digesting.then((d) => d.rows) : execute(tx, deleteWindow(info, mode.pcode, start, end, scope)));
  // Rows encoded early are COPYed as they were encoded: into the columns and with the constants of their shape.
  const copy = new CopyWriter(tx, mode.early?.shape ?? copyShape(info, columns, { constants }));
  // Held at once, sent after the delete; awaited before the COPY is sent. Such a replace takes no other rows.
  const adding = mode.early ? pipelined(copy.add(mode.early)) : Promise.resolve();
  return {
    write: (rows) => {
      if (mode.early) throw new Error(`${info.name}: a replace given its rows encoded early takes no other rows`);
      check(rows);
      return copy.write(rows);
    },
    flush: async () => {
      await adding;
      return copy.flush();
    },
    finish: async () => {
      await adding;
      await copy.flush();
      const { rows, replaced } = copy.copied();
      return { written: rows, deleted: await deleting, replaced, staged: null, ...(digesting ? { before: await digesting } : {}) };
    },
  };
}

/**
 * A replace's rows encoded with no transaction (engine/encode-early.ts): checked as the replace
 * checks them and encoded as its COPY encodes them, for its mode's `early`. Anything that needs a
 * statement (`flush`: a check that reads the rows written so far) calls `needsTransaction`.
 */
export function encodingSink(
  info: TableInfo,
  columns: readonly string[],
  mode: Extract<SinkMode, { kind: "replace" }>,
  needsTransaction: () => never,
): { readonly early: EncodedRows; readonly sink: RowSink } {
  const { constants, check } = replaceShape(info, columns, mode);
  const early = new EncodedRows(copyShape(info, columns, { constants }));
  const sink: RowSink = {
    write: async (rows) => {
      check(rows);
      early.encode(rows);
    },
    flush: async () => needsTransaction(),
    finish: async () => needsTransaction(),
  };
  return { early, sink };
}

function upsertSink(tx: TxHandle, info: TableInfo, columns: readonly string[], mode: Extract<SinkMode, { kind: "upsert" }>): RowSink {
  const constants = mode.constants ?? {};
  const name = quoteIdent(`apm_stage_${info.name}_${++staged}`);
  const defs = [...columns.map((c) => `${quoteIdent(c)} ${info.types.get(c)}`), `${quoteIdent(ORDER_COLUMN)} bigint`].join(", ");
  const creating = pipelined(tx.unsafe(`CREATE TEMP TABLE ${name} (${defs}) ON COMMIT DROP`).execute());
  // The staging COPY writes the arrival order too, so that the upsert keeps a key's last row.
  const stagingInfo: TableInfo = { ...info, types: new Map([...info.types, [ORDER_COLUMN, "bigint"]]) };
  const stagedColumns = [...columns, ORDER_COLUMN];
  const copy = new CopyWriter(tx, copyShape(stagingInfo, stagedColumns, { table: name }));
  let arrived = 0;
  return {
    write: (rows) => copy.write(rows.map((row) => ({ ...row, [ORDER_COLUMN]: arrived++ }))),
    flush: () => copy.flush(),
    finish: async () => {
      await copy.flush();
      await creating;
      const { rows, replaced } = copy.copied();
      const stagedRows = { name, rows };
      if (rows === 0) return { written: 0, deleted: 0, replaced: 0, staged: stagedRows };
      // Pipelined, in this order (exec.ts PIPELINING): a row at its old time goes, then the upsert.
      const moved = info.movable ? execute(tx, deleteMovedFromStaged(info, mode.key, constants, name)) : 0;
      const [deleted, written] = await Promise.all([moved, execute(tx, upsertFromStaged(info, columns, mode.key, constants, name))]);
      return { written, deleted, replaced, staged: stagedRows };
    },
  };
}

const msOf = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));

function assertInside(table: string, rows: readonly Row[], start: Date, end: Date): void {
  const s = start.getTime();
  const e = end.getTime();
  for (const row of rows) {
    const ws = msOf(row.window_start);
    const we = msOf(row.window_end);
    if (!(ws >= s && we <= e && ws < we)) {
      throw new RangeError(
        `${table}: row window ${String(row.window_start)} .. ${String(row.window_end)} is not inside the replaced window`,
      );
    }
  }
}

/** One batch, replacing a window's rows (tests and small writes). */
export async function replaceWindowRows(
  tx: TxHandle,
  table: TableRef,
  columns: readonly string[],
  pcode: number | bigint,
  windowStart: Date | number,
  windowEnd: Date | number,
  rows: readonly Row[],
  scope: Scope = {},
): Promise<{ deleted: number; inserted: number; replaced: number }> {
  const sink = openRowSink(tx, table, columns, { kind: "replace", pcode, start: windowStart, end: windowEnd, scope });
  if (rows.length > 0) await sink.write(rows);
  const r = await sink.finish();
  return { deleted: r.deleted, inserted: r.written, replaced: r.replaced };
}

/** One batch, upserted by `key` (tests and small writes). */
export async function upsertRows(
  tx: TxHandle,
  table: TableRef,
  columns: readonly string[],
  key: readonly string[],
  rows: readonly Row[],
  constants: Scope = {},
): Promise<{ written: number; replaced: number }> {
  const sink = openRowSink(tx, table, columns, { kind: "upsert", key, constants });
  if (rows.length > 0) await sink.write(rows);
  const r = await sink.finish();
  return { written: r.written, replaced: r.replaced };
}
