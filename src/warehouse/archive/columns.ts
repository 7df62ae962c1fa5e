// How each warehouse column travels to Parquet and back (src/warehouse/archive/): its Parquet
// schema, the SQL that reads it out of a partition as text (every value in Postgres's own text
// form, so nothing is rounded on the way), the Parquet value made of that text, and the text COPY
// takes to load the value again (`restore`). bigint is INT64, integer INT32, double precision
// DOUBLE, timestamptz a TIMESTAMP (microseconds, UTC: Postgres's own precision), text and jsonb
// UTF-8 strings (jsonb in its text form: JSON logical types would re-encode its numbers), arrays
// Parquet LISTs. The warehouse has no numeric column; a type not listed here refuses the archive.
import type { SchemaElement } from "hyparquet";
import { quoteIdent } from "../../db/sqlText.ts";
import { tableInfo } from "../../db/tables.ts";

/** A value as a Parquet column holds it (hyparquet's writer takes and its reader gives these). */
export type ParquetValue = bigint | number | boolean | string | null | readonly ParquetValue[];

interface Leaf {
  readonly element: Omit<SchemaElement, "name" | "repetition_type">;
  /** Postgres text -> Parquet value. */
  readonly fromText: (text: string) => ParquetValue;
  /** Parquet value -> the text COPY takes. */
  readonly toCopy: (value: ParquetValue) => string;
}

/** `-0` keeps its sign (String(-0) is "0"); NaN and Infinity are Postgres's spellings too. */
const doubleText = (v: ParquetValue) => (Object.is(v, -0) ? "-0" : String(v));

/** Micro-seconds since the epoch -> `2026-03-01T00:00:00.123456Z`. */
function microsText(v: ParquetValue): string {
  const micros = v as bigint;
  const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n);
  const fraction = micros - seconds * 1_000_000n;
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${String(fraction).padStart(6, "0")}Z`;
}

const LEAVES: Readonly<Record<string, Leaf>> = {
  bigint: { element: { type: "INT64" }, fromText: BigInt, toCopy: String },
  integer: { element: { type: "INT32" }, fromText: Number, toCopy: String },
  "double precision": { element: { type: "DOUBLE" }, fromText: Number, toCopy: doubleText },
  boolean: { element: { type: "BOOLEAN" }, fromText: (t) => t === "t", toCopy: (v) => (v ? "t" : "f") },
  text: { element: { type: "BYTE_ARRAY", converted_type: "UTF8" }, fromText: (t) => t, toCopy: String },
  jsonb: { element: { type: "BYTE_ARRAY", converted_type: "UTF8" }, fromText: (t) => t, toCopy: String },
  "timestamp with time zone": {
    element: { type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" } },
    fromText: BigInt,
    toCopy: microsText,
  },
};

export interface ArchiveColumn {
  readonly name: string;
  /** The column in a SELECT of the partition: text, or an array of texts. */
  readonly select: string;
  /** Its schema elements (three for a LIST). */
  readonly schema: SchemaElement[];
  /** What the SELECT gave -> the Parquet value. */
  readonly fromSql: (v: string | readonly (string | null)[] | null) => ParquetValue;
  /** The Parquet value -> COPY's text (null: NULL). */
  readonly toCopy: (v: ParquetValue) => string | null;
}

function arrayLiteral(items: readonly ParquetValue[], leaf: Leaf): string {
  const quote = (s: string) => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  return `{${items.map((e) => (e === null ? "NULL" : quote(leaf.toCopy(e)))).join(",")}}`;
}

function column(name: string, type: string): ArchiveColumn {
  const array = type.endsWith("[]");
  const leaf = LEAVES[array ? type.slice(0, -2) : type];
  if (!leaf) throw new Error(`column ${name}: type ${type} has no Parquet form in the archive`);
  const q = quoteIdent(name);
  if (!array) {
    const timestamp = type === "timestamp with time zone";
    return {
      name,
      select: timestamp ? `((extract(epoch FROM ${q}) * 1000000)::int8)::text` : `${q}::text`,
      schema: [{ name, repetition_type: "OPTIONAL", ...leaf.element }],
      fromSql: (v) => (v === null ? null : leaf.fromText(v as string)),
      toCopy: (v) => (v === null || v === undefined ? null : leaf.toCopy(v)),
    };
  }
  return {
    name,
    select: `${q}::text[]`,
    schema: [
      { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
      { name: "list", repetition_type: "REPEATED", num_children: 1 },
      { name: "element", repetition_type: "OPTIONAL", ...leaf.element },
    ],
    fromSql: (v) => (v === null ? null : (v as readonly (string | null)[]).map((e) => (e === null ? null : leaf.fromText(e)))),
    toCopy: (v) => (v === null || v === undefined ? null : arrayLiteral(v as readonly ParquetValue[], leaf)),
  };
}

/** The columns of `table` in declaration order, each with its way to Parquet and back. */
export function archiveColumns(table: string): ArchiveColumn[] {
  return [...tableInfo(table).types].map(([name, type]) => column(name, type));
}

/** The file's schema: the root, then each column's elements. */
export function parquetSchema(columns: readonly ArchiveColumn[]): SchemaElement[] {
  return [{ name: "root", num_children: columns.length }, ...columns.flatMap((c) => c.schema)];
}

/**
 * One value's part of a row's digest: its COPY text, length-prefixed (no separator inside a
 * string can make two rows alike). The same function reads the file back and loads it.
 */
export function digestPart(c: ArchiveColumn, v: ParquetValue): string {
  const text = c.toCopy(v);
  return text === null ? "N;" : `${text.length}:${text};`;
}
