// COPY of rows into a table (or a staging table) inside the caller's transaction: FROM STDIN on a
// real Postgres; on the embedded database (PGlite behind a socket without COPY) the same text is
// handed to PGlite directly (a CopyChannel). Both write the same columns from the same rows.
import { once } from "node:events";
import type { Writable } from "node:stream";
import { copyEncoder, type Getter } from "./copyText.ts";
import { type CopyChannel, onOneConnection, type SqlHandle } from "./exec.ts";
import type { Row } from "./rowsJson.ts";
import { assertColumns, quoteIdent, type Scope } from "./sqlText.ts";
import type { TableInfo } from "./tables.ts";

/** Rows encoded per write to the COPY stream: a few hundred KB each, so memory stays flat. */
const ROWS_PER_CHUNK = 2000;

/** Items of one COPY that share the values of the `constants` columns (one leaf of a window). */
export interface CopyPart {
  readonly items: readonly unknown[];
  readonly constants: Readonly<Record<string, unknown>>;
  /** How to read `columns` from an item; default: items are rows keyed by column. */
  readonly getters?: readonly Getter[];
}

/**
 * COPY `rows` (restricted to `columns`) into `table` (default: the table of `info`), with the
 * `constants` columns written to every row. Returns the rows copied.
 */
export function copyRows(
  sql: SqlHandle,
  info: TableInfo,
  columns: readonly string[],
  rows: readonly Row[],
  opts: { constants?: Scope; table?: string; channel?: CopyChannel } = {},
): Promise<number> {
  return copyParts(sql, info, columns, [{ items: rows, constants: opts.constants ?? {} }], opts.table, opts.channel);
}

/**
 * One COPY of several parts: each part's items with its own constants (the same columns in every
 * part, first in the COPY's column list), then `columns`. Returns the rows copied. With a
 * `channel` the statements sent before must have completed (the channel does not queue behind them).
 */
export async function copyParts(
  sql: SqlHandle,
  info: TableInfo,
  columns: readonly string[],
  parts: readonly CopyPart[],
  table?: string,
  channel?: CopyChannel,
): Promise<number> {
  const rows = parts.reduce((n, p) => n + p.items.length, 0);
  if (rows === 0) return 0;
  const constantColumns = Object.keys(parts[0]!.constants);
  for (const part of parts) {
    if (Object.keys(part.constants).join() !== constantColumns.join())
      throw new Error(`${info.name}: COPY parts with different constant columns`);
  }
  const all = [...constantColumns, ...columns];
  assertColumns(info, all);
  const target = `${table ?? quoteIdent(info.name)} (${all.map(quoteIdent).join(", ")})`;
  if (channel) {
    let text = "";
    for (const part of parts) text += copyEncoder(info, columns, part.constants, part.getters)(part.items);
    const copied = await channel.copy(`COPY ${target} FROM '/dev/blob'`, text);
    if (copied !== rows) throw new Error(`${info.name}: COPY stored ${copied} of ${rows} rows`);
    return rows;
  }
  const query = sql.unsafe(`COPY ${target} FROM STDIN`);
  const opened = query.writable();
  query.execute(); // sent now, after the statements made before it (exec.ts PIPELINING)
  const stream = (await opened) as Writable;
  const done = new Promise<void>((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
    // A connection lost mid-COPY rejects the query but may never end the stream.
    query.catch(reject);
  });
  for (const part of parts) {
    const encode = copyEncoder(info, columns, part.constants, part.getters);
    for (let i = 0; i < part.items.length; i += ROWS_PER_CHUNK) {
      if (!stream.write(encode(part.items.slice(i, i + ROWS_PER_CHUNK)))) await Promise.race([once(stream, "drain"), done]);
    }
  }
  stream.end();
  await done;
  return rows;
}

let staged = 0;

/**
 * A temporary table with exactly `columns` (types of `info`), dropped at commit, filled by COPY:
 * the source of an INSERT .. SELECT .. ON CONFLICT for upserts. Returns its quoted name.
 */
export async function stageRows(
  sql: SqlHandle,
  info: TableInfo,
  columns: readonly string[],
  rows: readonly Row[],
  channel?: CopyChannel,
): Promise<string> {
  const name = quoteIdent(`apm_stage_${info.name}_${++staged}`);
  const defs = columns.map((c) => `${quoteIdent(c)} ${info.types.get(c)}`).join(", ");
  const create = sql.unsafe(`CREATE TEMP TABLE ${name} (${defs}) ON COMMIT DROP`).execute();
  // Pipelined: the CREATE and the COPY leave together, in that order (exec.ts PIPELINING); a
  // channel's COPY does not go through the connection: it waits for the CREATE.
  if (channel || !onOneConnection(sql)) await create;
  await Promise.all([create, copyRows(sql, info, columns, rows, { table: name, ...(channel ? { channel } : {}) })]);
  return name;
}
