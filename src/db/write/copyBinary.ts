// Rows -> COPY binary format. Numbers and times go as their 8 bytes (no number -> text -> number
// round trip on either side: on both the engine's and the server's profiles that was the largest
// single cost of COPY text), text as UTF-8. A value the binary form cannot carry exactly as the
// text form would (a numeric string, a fraction in an integer column) makes the encoder throw
// NotBinaryError: the writer then sends the same rows as COPY text, where the server decides.
// Text the database cannot hold (cleanText.ts) makes a field throw DIRTY: that row is cleaned and
// encoded again.

import type { TableInfo } from "../tables.ts";
import { encoded, type Out } from "./binaryOut.ts";
import { cleanRow, DIRTY, isCleanJson, jsonText } from "./cleanText.ts";
import type { EncoderOptions } from "./copyText.ts";
import type { Row } from "./row.ts";

export class NotBinaryError extends Error {
  constructor(column: string, value: unknown) {
    super(`${column}: ${typeof value} value has no exact binary COPY form`);
    this.name = "NotBinaryError";
  }
}

/** PGCOPY header (signature, flags, extension length) and the end-of-data marker. */
export const BINARY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0]);
export const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

/** 2000-01-01T00:00:00Z, Postgres's epoch, in Unix ms. */
const PG_EPOCH_MS = 946_684_800_000;
const INT8_OID = 20;
const TEXT_OID = 25;

type Field = (out: Out, v: unknown) => void;

type Refuse = (v: unknown) => never;

/** A field encoder per column type; `refuse` throws for a value the type cannot take. */
const ENCODERS: Readonly<Record<string, (refuse: Refuse) => Field>> = {
  bigint: (refuse) => (out, v) => {
    if (typeof v === "number" && Number.isSafeInteger(v)) {
      out.int32(8);
      out.int64(v);
    } else if (typeof v === "bigint" && BigInt.asIntN(64, v) === v) {
      out.int32(8);
      out.ensure(8);
      out.buf.writeBigInt64BE(v, out.pos);
      out.pos += 8;
    } else refuse(v);
  },
  integer: (refuse) => (out, v) => {
    if (typeof v === "number" && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) {
      out.int32(4);
      out.int32(v);
    } else refuse(v);
  },
  "double precision": (refuse) => (out, v) => {
    if (typeof v !== "number") refuse(v);
    out.int32(8);
    out.float64(v as number);
  },
  boolean: (refuse) => (out, v) => {
    if (typeof v !== "boolean") refuse(v);
    out.int32(1);
    out.ensure(1);
    out.buf[out.pos++] = v ? 1 : 0;
  },
  "timestamp with time zone": (refuse) => (out, v) => {
    const ms = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Number.NaN;
    if (!Number.isSafeInteger(ms)) refuse(v);
    out.int32(8);
    out.int64((ms - PG_EPOCH_MS) * 1000);
  },
  jsonb: () => (out, v) => {
    const text = jsonText(v);
    if (!isCleanJson(text)) throw DIRTY;
    out.text(text, 1);
  },
  // As the text encoder stores them: a Date as ISO text, an object as JSON text.
  text: () => (out, v) =>
    out.text(typeof v === "string" ? v : v instanceof Date ? v.toISOString() : typeof v === "object" ? jsonText(v) : String(v)),
  "bigint[]": (refuse) => arrayField(INT8_OID, refuse),
  "text[]": (refuse) => arrayField(TEXT_OID, refuse),
};

/** A one-dimensional array of bigint or text, NULL items allowed. */
function arrayField(oid: number, refuse: Refuse): Field {
  return (out, v) => {
    if (!Array.isArray(v)) refuse(v);
    const items = v as unknown[];
    const start = out.pos;
    out.int32(0); // length, filled in below
    out.int32(1); // dimensions
    out.int32(items.some((x) => x === null || x === undefined) ? 1 : 0);
    out.int32(oid);
    out.int32(items.length);
    out.int32(1); // lower bound
    for (const x of items) {
      if (x === null || x === undefined) out.int32(-1);
      else if (oid === TEXT_OID) out.text(typeof x === "string" ? x : refuse(x));
      else if (typeof x === "number" && Number.isSafeInteger(x)) {
        out.int32(8);
        out.int64(x);
      } else refuse(x);
    }
    out.buf.writeInt32BE(out.pos - start - 4, start);
  };
}

function fieldOf(type: string, column: string): Field {
  const encoder = Object.hasOwn(ENCODERS, type) ? ENCODERS[type] : undefined;
  if (!encoder) throw new Error(`${column}: no binary COPY encoding for type ${type}`);
  return encoder((v: unknown): never => {
    throw new NotBinaryError(column, v);
  });
}

export type BinaryEncoder = (rows: readonly Row[]) => Buffer;

/** Writes the tuples of `rows`; a row whose text must be cleaned goes to `dirty` from its start. */
type RowsWriter = (
  out: Out,
  rows: readonly Row[],
  lead: Buffer,
  count: number,
  dirty: (error: unknown, row: Row, start: number) => void,
) => void;

/** The compiled loop of each table and columns (with their types): made once, not per COPY. */
const compiled = new Map<string, RowsWriter>();

/**
 * An encoder of `columns` of `info` (after the `constants`, the same on every row and encoded
 * once): each call returns the tuples of the rows, without header or trailer. Throws
 * NotBinaryError for a value without an exact binary form.
 */
export function binaryEncoder(info: TableInfo, columns: readonly string[], opts: EncoderOptions): BinaryEncoder {
  const { constants = {}, tally } = opts;
  const fieldFor = (c: string) => fieldOf(info.types.get(c) ?? "", `${info.name}.${c}`);
  const lead = encoded((out) => {
    for (const [c, v] of Object.entries(constants)) {
      if (v === null || v === undefined) out.int32(-1);
      else fieldFor(c)(out, v);
    }
  });
  const count = Object.keys(constants).length + columns.length;
  const write = writerOf(info, columns, fieldFor);
  const rethrow = (e: unknown) => {
    throw e;
  };
  // A row with text the database cannot hold: written again from its start, cleaned (cleanText.ts),
  // through the same loop; a cleaned row cannot be dirty again.
  const dirty = (e: unknown, row: Row, start: number, out: Out) => {
    if (e !== DIRTY) throw e;
    const values = columns.map((c) => row[c]);
    tally.replaced += cleanRow(columns, values);
    const cleaned: Record<string, unknown> = { ...row };
    for (let i = 0; i < columns.length; i++) cleaned[columns[i]!] = values[i];
    out.pos = start;
    write(out, [cleaned], lead, count, rethrow);
  };
  return (rows) => encoded((out) => write(out, rows, lead, count, (e, row, start) => dirty(e, row, start, out)));
}

/** The compiled loop of `columns` of `info`, from the cache or made now. */
function writerOf(info: TableInfo, columns: readonly string[], fieldFor: (c: string) => Field): RowsWriter {
  const key = [info.name, ...columns.map((c) => `${c} ${info.types.get(c)}`)].join("\u0000");
  let write = compiled.get(key);
  if (!write) {
    write = compileRows(columns, columns.map(fieldFor));
    compiled.set(key, write);
  }
  return write;
}

/**
 * The loop over rows for `columns`, compiled: a straight run of named property reads, each
 * field's call site seeing one encoder (a loop over the columns made both megamorphic, as
 * kernel/record.ts found for the fast lane). The text holds JSON-quoted column names only.
 */
function compileRows(columns: readonly string[], fields: readonly Field[]): RowsWriter {
  const steps = columns.map(
    (c, i) => `v = row[${JSON.stringify(c)}]; if (v === null || v === undefined) out.int32(-1); else f${i}(out, v);`,
  );
  const source = `"use strict";
return function writeRows(out, rows, lead, count, dirty) {
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    const start = out.pos;
    out.int16(count);
    out.bytes(lead);
    let v;
    try {
      ${steps.join("\n      ")}
    } catch (e) {
      dirty(e, row, start);
    }
  }
};`;
  return new Function(...fields.map((_, i) => `f${i}`), source)(...fields) as RowsWriter;
}
