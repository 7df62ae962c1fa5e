// COPY of rows into a table (or a staging table) inside the caller's transaction: FROM STDIN on a
// real Postgres; on the embedded database (PGlite, whose protocol handling has no COPY FROM STDIN) the same text is
// handed to PGlite directly (a CopyChannel). Both write the same columns from the same rows.
import { once } from "node:events";
import type { Writable } from "node:stream";
import { BINARY_HEADER, BINARY_TRAILER, binaryEncoder, NotBinaryError } from "./copyBinary.ts";
import { copyEncoder, type Getter } from "./copyText.ts";
import { type CopyChannel, onOneConnection, type SqlHandle } from "./exec.ts";
import type { Row } from "./rowsJson.ts";
import { assertColumns, quoteIdent, type Scope } from "./sqlText.ts";
import type { TableInfo } from "./tables.ts";

/** Rows per chunk written to the COPY stream (a few hundred KB each). */
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
  // Encoded before the COPY is sent (all synchronous: the COPY still leaves right after the
  // statements made before this call): binary where every value has an exact binary form, else text.
  const { format, chunks } = encodeParts(info, columns, parts);
  const options = format === "binary" ? " WITH (FORMAT binary)" : "";
  if (channel) {
    const data = format === "binary" ? Buffer.concat(chunks as Buffer[]) : (chunks as string[]).join("");
    const copied = await channel.copy(`COPY ${target} FROM '/dev/blob'${options}`, data);
    if (copied !== rows) throw new Error(`${info.name}: COPY stored ${copied} of ${rows} rows`);
    return rows;
  }
  const query = sql.unsafe(`COPY ${target} FROM STDIN${options}`);
  const opened = query.writable();
  query.execute(); // sent now, after the statements made before it (exec.ts PIPELINING)
  const stream = (await opened) as Writable;
  const done = new Promise<void>((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
    // A connection lost mid-COPY rejects the query but may never end the stream.
    query.catch(reject);
  });
  for (const chunk of chunks) {
    if (!stream.write(chunk)) await Promise.race([once(stream, "drain"), done]);
  }
  stream.end();
  await done;
  return rows;
}

/** The COPY data of `parts`: binary (header, tuples, trailer) where it can carry every value exactly, else text. */
function encodeParts(
  info: TableInfo,
  columns: readonly string[],
  parts: readonly CopyPart[],
): { format: "binary" | "text"; chunks: (Buffer | string)[] } {
  try {
    const tuples = parts.flatMap((part) =>
      chunked(part.items).map((items) => binaryEncoder(info, columns, part.constants, part.getters)(items)),
    );
    return { format: "binary", chunks: [BINARY_HEADER, ...tuples, BINARY_TRAILER] };
  } catch (e) {
    if (!(e instanceof NotBinaryError)) throw e;
    return {
      format: "text",
      chunks: parts.flatMap((part) => chunked(part.items).map((items) => copyEncoder(info, columns, part.constants, part.getters)(items))),
    };
  }
}

const chunked = <T>(items: readonly T[]): (readonly T[])[] => {
  const out: (readonly T[])[] = [];
  for (let i = 0; i < items.length; i += ROWS_PER_CHUNK) out.push(items.slice(i, i + ROWS_PER_CHUNK));
  return out;
};

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
