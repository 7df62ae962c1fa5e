// One table's rows from one database to another, streamed: a cursor on the source hands out
// batches of rows as text, and one COPY FROM STDIN on the target takes them as they come
// (pipeline's backpressure), so memory holds one batch whatever the table's size. Every value
// travels as Postgres's own text form (`::text` on the way out, COPY's text format on the way
// in): numbers, times, JSON and arrays come back exactly as they were, with no client-side types.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import { quoteIdent } from "../db/sqlText.ts";
import { copyEscape } from "../db/write/copyText.ts";

const CURSOR = "apm_transfer_rows";
/** A batch aims at this many characters: rows run from 60 bytes to the MiBs of a quarantined record. */
const BATCH_CHARS = 4 * 1024 * 1024;
const FIRST_BATCH = 500;
const MAX_BATCH = 20_000;

type Row = readonly (string | null)[];

/** One row in COPY's text format: tab-separated, `\N` for null, backslash escapes. */
function copyLine(row: Row): string {
  return `${row.map((v) => (v === null ? "\\N" : copyEscape(v))).join("\t")}\n`;
}

/** The next batch's row count: grown or shrunk towards `target` characters from what the last one weighed. */
function nextBatch(rows: number, chars: number, target: number): number {
  const perRow = Math.max(1, chars / rows);
  return Math.max(1, Math.min(MAX_BATCH, Math.floor(target / perRow)));
}

export interface CopyOptions {
  /** Characters a batch aims at (default 4 MiB). */
  readonly batchChars?: number;
}

/** The table's rows as COPY text, one chunk per FETCH, from a cursor of `source` (inside its transaction). */
async function* batches(
  source: postgres.TransactionSql,
  table: string,
  columns: readonly string[],
  copied: { rows: number },
  target: number,
) {
  const select = columns.map((c) => `${quoteIdent(c)}::text`).join(", ");
  await source.unsafe(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR SELECT ${select} FROM ${quoteIdent(table)}`);
  try {
    let size = FIRST_BATCH;
    for (;;) {
      const rows = (await source.unsafe(`FETCH ${size} FROM ${CURSOR}`).values()) as unknown as Row[];
      if (rows.length === 0) return;
      const text = rows.map(copyLine).join("");
      copied.rows += rows.length;
      size = nextBatch(rows.length, text.length, target);
      yield text;
    }
  } finally {
    // After a failed FETCH the transaction is aborted and refuses the CLOSE: the first error stands.
    await source.unsafe(`CLOSE ${CURSOR}`).catch(() => {});
  }
}

/**
 * Copies every row of `table` (its `columns`, by name) from `source`, a transaction of the source
 * database, into `target`, a transaction of the target; returns the number of rows copied.
 */
export async function copyTable(
  source: postgres.TransactionSql,
  target: postgres.TransactionSql,
  table: string,
  columns: readonly string[],
  opts: CopyOptions = {},
): Promise<number> {
  const copied = { rows: 0 };
  const list = columns.map(quoteIdent).join(", ");
  const writable = await target.unsafe(`COPY ${quoteIdent(table)} (${list}) FROM STDIN`).writable();
  // One batch read ahead at most: Readable.from would otherwise buffer 16.
  await pipeline(Readable.from(batches(source, table, columns, copied, opts.batchChars ?? BATCH_CHARS), { highWaterMark: 1 }), writable);
  return copied.rows;
}
