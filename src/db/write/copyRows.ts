// The one way rows reach a table: COPY FROM STDIN inside the caller's transaction, into the table
// or a staging table, on both databases (the embedded one answers COPY over its in-process
// connection, embedded-socket.ts). Binary where every value has an exact binary form, else text.
import { once } from "node:events";
import type { Writable } from "node:stream";
import type { SqlHandle } from "../driver/exec.ts";
import { assertColumns, quoteIdent } from "../sqlText.ts";
import type { TableInfo } from "../tables.ts";
import { cleanValue } from "./cleanText.ts";
import { BINARY_HEADER, BINARY_TRAILER, binaryEncoder, NotBinaryError } from "./copyBinary.ts";
import { copyEncoder, type EncoderOptions, type Tally } from "./copyText.ts";
import type { Row } from "./row.ts";

/** Rows encoded at a time. */
const ROWS_PER_CHUNK = 2000;
/**
 * Bytes per write to the COPY stream: the driver makes each write one CopyData message and one
 * socket write, so small pieces (the 19-byte binary header, the 2-byte trailer, a few hundred
 * rows) are joined up to this size: a window's COPY is usually one write.
 */
const WRITE_BYTES = 1024 * 1024;

/** Where a COPY goes besides its rows' columns. */
export interface CopyOptions {
  /** Columns with the same value on every row (pcode, window, scope): first in the column list. */
  readonly constants?: Readonly<Record<string, unknown>>;
  /** A (quoted) staging table instead of the table of `info`. */
  readonly table?: string;
}

export interface Copied {
  readonly rows: number;
  /** Values that held text the database cannot hold, written with U+FFFD (cleanText.ts). */
  readonly replaced: number;
}

/** A value the database refused inside a COPY: its message names the table, line and column. */
export class CopyRefusedError extends Error {
  readonly code: string;
  constructor(table: string, cause: Error & { code: string; where?: string }) {
    super(`${table}: the database refused a value: ${cause.message}${cause.where ? ` (${cause.where})` : ""}`, { cause });
    this.name = "CopyRefusedError";
    this.code = cause.code;
  }
}

/**
 * One COPY of `rows` (their `columns`, after the `constants` columns) into the table of `info`.
 * Sent at once, after the statements made before it (exec.ts PIPELINING); make none after it
 * until it settles (a connection in copy-in mode takes nothing else). The rows are encoded before
 * this returns its promise: the caller may let them go then.
 */
export async function copyRows(
  sql: SqlHandle,
  info: TableInfo,
  columns: readonly string[],
  rows: readonly Row[],
  opts: CopyOptions = {},
): Promise<Copied> {
  if (rows.length === 0) return { rows: 0, replaced: 0 };
  // Constants come from configuration and requests; cleaned here, once, not counted.
  const constants = cleanValue(opts.constants ?? {}) as Readonly<Record<string, unknown>>;
  const all = [...Object.keys(constants), ...columns];
  assertColumns(info, all);
  const target = `${opts.table ?? quoteIdent(info.name)} (${all.map(quoteIdent).join(", ")})`;
  // Encoded before the COPY is sent (all synchronous: the COPY still leaves right after the
  // statements made before this call).
  const tally: Tally = { replaced: 0 };
  const { format, chunks } = encode(info, columns, rows, { constants, tally });
  const query = sql.unsafe(`COPY ${target} FROM STDIN${format === "binary" ? " WITH (FORMAT binary)" : ""}`);
  const opened = query.writable();
  query.execute(); // sent now, after the statements made before it (exec.ts PIPELINING)
  const stream = (await opened) as Writable;
  const done = new Promise<void>((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
    // A connection lost mid-COPY rejects the query but may never end the stream.
    query.catch(reject);
  });
  try {
    for (const chunk of chunks) {
      if (!stream.write(chunk)) await Promise.race([once(stream, "drain"), done]);
    }
    stream.end();
    await done;
  } catch (e) {
    throw refused(e) ? new CopyRefusedError(info.name, e) : e;
  }
  return { rows: rows.length, replaced: tally.replaced };
}

/** A server error about the data: class 22 (data exception) or 23 (integrity constraint). */
function refused(e: unknown): e is Error & { code: string; where?: string } {
  const code = (e as { code?: unknown }).code;
  return e instanceof Error && typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** The COPY data of `rows`: binary (header, tuples, trailer) where it can carry every value exactly, else text. */
function encode(
  info: TableInfo,
  columns: readonly string[],
  rows: readonly Row[],
  opts: EncoderOptions,
): { format: "binary" | "text"; chunks: (Buffer | string)[] } {
  try {
    const tuples = pieces(BINARY_HEADER, rows, binaryEncoder(info, columns, opts), BINARY_TRAILER);
    return { format: "binary", chunks: joined(tuples, (parts) => Buffer.concat(parts)) };
  } catch (e) {
    if (!(e instanceof NotBinaryError)) throw e;
    opts.tally.replaced = 0;
    return { format: "text", chunks: joined(pieces("", rows, copyEncoder(info, columns, opts), ""), (parts) => parts.join("")) };
  }
}

/** `head`, `rows` encoded ROWS_PER_CHUNK at a time, then `tail` (empty ones left out). */
function* pieces<T extends Buffer | string>(head: T, rows: readonly Row[], encodeRows: (rows: readonly Row[]) => T, tail: T): Generator<T> {
  if (head.length > 0) yield head;
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) yield encodeRows(rows.slice(i, i + ROWS_PER_CHUNK));
  if (tail.length > 0) yield tail;
}

/**
 * Consecutive pieces joined (`join`) into writes of up to WRITE_BYTES (one piece may be larger),
 * as they are made: the pieces of one write are let go once joined, never all held beside the writes.
 */
function joined<T extends Buffer | string>(made: Iterable<T>, join: (parts: T[]) => T): T[] {
  const out: T[] = [];
  let group: T[] = [];
  let size = 0;
  for (const piece of made) {
    if (group.length > 0 && size + piece.length > WRITE_BYTES) {
      out.push(group.length === 1 ? group[0]! : join(group));
      group = [];
      size = 0;
    }
    group.push(piece);
    size += piece.length;
  }
  if (group.length > 0) out.push(group.length === 1 ? group[0]! : join(group));
  return out;
}
