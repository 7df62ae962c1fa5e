// The one way rows reach a table: COPY FROM STDIN inside the caller's transaction, into the table
// or a staging table, on both databases (the embedded one answers COPY over its in-process
// connection, embedded-socket.ts). Binary where every value has an exact binary form, else text.
import type postgres from "postgres";
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
 * Characters per CopyData message of text rows: their pieces are joined up to this size before
 * their conversion to bytes. Binary pieces are sent as they are, each its own message, without a copy.
 */
const WRITE_BYTES = 1024 * 1024;
/** Encoded rows a CopyWriter holds before it sends them (a window of a few hundred rows: one COPY). */
const COPY_BYTES = 256 * 1024;

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
  const writer = new CopyWriter(sql, copyShape(info, columns, opts));
  await writer.write(rows);
  await writer.flush();
  return writer.copied();
}

/** What a COPY's data is made for: the table (or staging table) and columns, and the constants. */
export interface CopyShape {
  readonly info: TableInfo;
  readonly columns: readonly string[];
  readonly constants: Readonly<Record<string, unknown>>;
  /** The table and its column list, as the COPY statement names them. */
  readonly target: string;
}

export function copyShape(info: TableInfo, columns: readonly string[], opts: CopyOptions = {}): CopyShape {
  // Constants come from configuration and requests; cleaned here, once, not counted.
  const constants = cleanValue(opts.constants ?? {}) as Readonly<Record<string, unknown>>;
  const all = [...Object.keys(constants), ...columns];
  assertColumns(info, all);
  const target = `${opts.table ?? quoteIdent(info.name)} (${all.map(quoteIdent).join(", ")})`;
  return { info, columns, constants, target };
}

/** A batch of rows encoded: its COPY data, its rows, and the values cleaned in it. */
interface EncodedBatch {
  readonly data: Encoded;
  readonly rows: number;
  readonly replaced: number;
}

function encodeBatch({ info, columns, constants }: CopyShape, rows: readonly Row[]): EncodedBatch {
  const tally: Tally = { replaced: 0 };
  const data = encode(info, columns, rows, { constants, tally });
  return { data, rows: rows.length, replaced: tally.replaced };
}

/**
 * Rows encoded for a COPY, with no connection (engine/encode-early.ts): each batch as
 * CopyWriter.write encodes it, kept unchanged, so that a CopyWriter of the same shape adds them
 * (`add`) in every transaction that writes them, a retried one too.
 */
export class EncodedRows {
  readonly batches: EncodedBatch[] = [];
  /** Memory the encoded rows take: their bytes, two a character of text (a string may be two-byte). */
  bytes = 0;

  constructor(readonly shape: CopyShape) {}

  encode(rows: readonly Row[]): void {
    if (rows.length === 0) return;
    // Held until the transaction: a binary piece is its own buffer, at its size (binaryOut.ts `encoded`).
    const batch = encodeBatch(this.shape, rows);
    this.batches.push(batch);
    this.bytes += batch.data.format === "text" ? 2 * batch.data.bytes : batch.data.bytes;
  }
}

/**
 * Rows COPYed into one table, a batch at a time: each batch is encoded at once (the caller may
 * let its rows go), and the encoded batches are held until they reach COPY_BYTES, then sent as
 * one COPY; `flush` sends what is held. So a window of a few hundred rows read in several parse
 * batches is one COPY statement, not one per batch, and a window of any size holds at most about
 * COPY_BYTES of encoded rows. While the writer holds rows, the table does not have them yet: a
 * statement that reads them must come after `flush`.
 */
export class CopyWriter {
  #held: Encoded | null = null;
  #rows = 0;
  #replaced = 0;

  constructor(
    private readonly sql: SqlHandle,
    private readonly shape: CopyShape,
  ) {}

  /** Encodes `rows` now; sends a COPY when the held rows reach COPY_BYTES (or change format). */
  async write(rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#hold(encodeBatch(this.shape, rows));
  }

  /** Rows encoded before for this writer's shape (the writer made from `early.shape`), held as `write` holds them; they are not changed. */
  async add(early: EncodedRows): Promise<void> {
    if (early.shape !== this.shape) throw new Error(`${this.shape.info.name}: rows encoded for another COPY cannot be added to this one`);
    for (const batch of early.batches) await this.#hold(batch);
  }

  async #hold({ data, rows, replaced }: EncodedBatch): Promise<void> {
    this.#rows += rows;
    this.#replaced += replaced;
    const held = this.#held;
    if (held && held.format === data.format) {
      // Held beside others: a binary piece is its own buffer, at its size (binaryOut.ts `encoded`).
      held.chunks.push(...data.chunks);
      held.bytes += data.bytes;
    } else {
      // A list of its own: later batches are added to it, never to `data` (rows encoded early are added again on a retry).
      this.#held = { format: data.format, chunks: [...data.chunks], bytes: data.bytes };
      // Rows of another format (text for a value binary cannot carry) go in a COPY of their own.
      if (held) await this.#send(held);
    }
    if ((this.#held?.bytes ?? 0) >= COPY_BYTES) await this.flush();
  }

  /** Sends the rows held, if any, as one COPY. */
  async flush(): Promise<void> {
    const held = this.#held;
    this.#held = null;
    if (held) await this.#send(held);
  }

  /** Rows written so far (held ones included), and values cleaned. */
  copied(): Copied {
    return { rows: this.#rows, replaced: this.#replaced };
  }

  /**
   * One COPY of the held rows: its statement, data and end in one write (the driver's `copyData`,
   * patches/postgres+3.4.9.patch), settled by the server's answer. Waiting for the copy-in
   * response before sending the data cost a round trip a COPY: 5% of a run through one connection,
   * 8% of a run into the embedded database (docs/benchmarks.md).
   */
  async #send({ format, chunks }: Encoded): Promise<void> {
    const binary = format === "binary";
    const data = binary
      ? [BINARY_HEADER, ...(chunks as Buffer[]), BINARY_TRAILER]
      : joined(chunks as string[]).map((text) => Buffer.from(text));
    const statement = `COPY ${this.shape.target} FROM STDIN${binary ? " WITH (FORMAT binary)" : ""}`;
    const query = this.sql.unsafe(statement, [], { copyData: data } as postgres.UnsafeQueryOptions);
    query.execute(); // sent now, after the statements made before it (exec.ts PIPELINING)
    try {
      await query;
    } catch (e) {
      throw refused(e) ? new CopyRefusedError(this.shape.info.name, e) : e;
    }
  }
}

/** Encoded rows: binary tuples (no header or trailer) or text lines. */
interface Encoded {
  readonly format: "binary" | "text";
  readonly chunks: (Buffer | string)[];
  /** Their length: bytes, characters for text. */
  bytes: number;
}

/** A server error about the data: class 22 (data exception) or 23 (integrity constraint). */
function refused(e: unknown): e is Error & { code: string; where?: string } {
  const code = (e as { code?: unknown }).code;
  return e instanceof Error && typeof code === "string" && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** The COPY data of `rows`: binary where it can carry every value exactly, else text. */
function encode(info: TableInfo, columns: readonly string[], rows: readonly Row[], opts: EncoderOptions): Encoded {
  try {
    const chunks = pieces(rows, binaryEncoder(info, columns, opts));
    return { format: "binary", chunks, bytes: size(chunks) };
  } catch (e) {
    if (!(e instanceof NotBinaryError)) throw e;
    opts.tally.replaced = 0;
    const chunks = pieces(rows, copyEncoder(info, columns, opts));
    return { format: "text", chunks, bytes: size(chunks) };
  }
}

const size = (chunks: readonly (Buffer | string)[]) => chunks.reduce((n, c) => n + c.length, 0);

/** `rows` encoded ROWS_PER_CHUNK at a time. */
function pieces<T extends Buffer | string>(rows: readonly Row[], encodeRows: (rows: readonly Row[]) => T): T[] {
  const out: T[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) out.push(encodeRows(rows.slice(i, i + ROWS_PER_CHUNK)));
  return out;
}

/**
 * Consecutive pieces of text joined into writes of up to WRITE_BYTES (one piece may be larger),
 * as they are made: the pieces of one write are let go once joined, never all held beside the writes.
 */
function joined(made: Iterable<string>): string[] {
  const out: string[] = [];
  let group: string[] = [];
  let size = 0;
  for (const piece of made) {
    if (group.length > 0 && size + piece.length > WRITE_BYTES) {
      out.push(group.join(""));
      group = [];
      size = 0;
    }
    group.push(piece);
    size += piece.length;
  }
  if (group.length > 0) out.push(group.join(""));
  return out;
}
