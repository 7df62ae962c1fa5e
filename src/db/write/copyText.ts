// Rows -> COPY text format (tab-separated, \N for null), one encoder per (table, columns) built
// once per write. The writer's format is binary (copyBinary.ts); text is its fallback for a COPY
// holding a value without an exact binary form, which the server then parses.

import type { TableInfo } from "../tables.ts";
import { cleanRow, DIRTY, isClean, isCleanJson, jsonText } from "./cleanText.ts";
import type { Row } from "./row.ts";

type Kind = "text" | "number" | "bool" | "time" | "json" | "array";

const KIND: Readonly<Record<string, Kind>> = {
  text: "text",
  bigint: "number",
  integer: "number",
  "double precision": "number",
  boolean: "bool",
  "timestamp with time zone": "time",
  jsonb: "json",
  "bigint[]": "array",
  "text[]": "array",
};

const SPECIAL = /[\\\n\r\t]/;

/** Escapes a text value for COPY text format (backslash, newline, carriage return, tab). */
export function copyEscape(text: string): string {
  if (!SPECIAL.test(text)) return text;
  return text.replace(/[\\\n\r\t]/g, (c) => (c === "\\" ? "\\\\" : c === "\n" ? "\\n" : c === "\r" ? "\\r" : "\\t"));
}

/** Text the database can hold (cleanText.ts), else the row is cleaned first. */
function clean(text: string): string {
  if (!isClean(text)) throw DIRTY;
  return text;
}

function arrayElement(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  return `"${clean(String(v)).replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function json(v: unknown): string {
  const text = jsonText(v);
  if (!isCleanJson(text)) throw DIRTY;
  return copyEscape(text);
}

/** Epoch ms -> ISO text; the windows of one write repeat a handful of times, so they are cached. */
class TimeText {
  readonly #cache = new Map<number, string>();
  of(value: unknown): string {
    const ms = value instanceof Date ? value.getTime() : typeof value === "number" ? value : Number.NaN;
    if (Number.isNaN(ms)) return String(value);
    let text = this.#cache.get(ms);
    if (text === undefined) {
      text = new Date(ms).toISOString();
      if (this.#cache.size > 4096) this.#cache.clear();
      this.#cache.set(ms, text);
    }
    return text;
  }
}

export type CopyEncoder = (rows: readonly Row[]) => string;

/** Values replaced by one encoder (text the database cannot hold, see cleanText.ts). */
export interface Tally {
  replaced: number;
}

/** What an encoder writes besides each row's `columns`. */
export interface EncoderOptions {
  /** Columns with the same value on every row (written first, encoded once). */
  readonly constants?: Readonly<Record<string, unknown>>;
  readonly tally: Tally;
}

/** The general encoder of one value of a column kind (null and undefined are \N). */
function fieldEncoder(kind: Kind, times: TimeText): (v: unknown) => string {
  return (v) => {
    if (v === null || v === undefined) return "\\N";
    switch (kind) {
      case "number":
        return typeof v === "number" || typeof v === "bigint" ? String(v) : copyEscape(String(v));
      case "bool":
        return v === true ? "t" : v === false ? "f" : copyEscape(String(v));
      case "time":
        return times.of(v);
      case "json":
        return json(v);
      case "array":
        return Array.isArray(v) ? copyEscape(`{${v.map(arrayElement).join(",")}}`) : copyEscape(String(v));
      default:
        // As the JSON path would store it: a Date as ISO text, an object as JSON text.
        if (typeof v === "string") return copyEscape(clean(v));
        if (v instanceof Date) return v.toISOString();
        return typeof v === "object" ? json(v) : copyEscape(clean(String(v)));
    }
  };
}

/**
 * An encoder of `columns` of `info`; each call returns the COPY text of the rows (one line each).
 * `constants` (pcode, window, scope) are the same on every row: encoded once, written first.
 * A row holding text the database cannot hold is cleaned (cleanRow) and counted in `tally`.
 */
export function copyEncoder(info: TableInfo, columns: readonly string[], opts: EncoderOptions): CopyEncoder {
  const { constants = {}, tally } = opts;
  const kinds = columns.map((c) => {
    const kind = KIND[info.types.get(c) ?? ""];
    if (!kind) throw new Error(`${info.name}.${c}: no COPY encoding for type ${info.types.get(c)}`);
    return kind;
  });
  const times = new TimeText();
  const constCols = Object.keys(constants);
  const prefix = constCols.map((c) => fieldEncoder(KIND[info.types.get(c) ?? ""] ?? "text", times)(constants[c])).join("\t");
  const lead = constCols.length === 0 ? "" : columns.length === 0 ? prefix : `${prefix}\t`;
  const fields = kinds.map((kind) => fieldEncoder(kind, times));
  return (rows) => {
    let out = "";
    for (const row of rows) {
      let line = lead;
      try {
        for (let i = 0; i < fields.length; i++) {
          if (i > 0) line += "\t";
          line += fields[i]!(row[columns[i]!]);
        }
      } catch (e) {
        if (e !== DIRTY) throw e;
        const values = columns.map((c) => row[c]);
        tally.replaced += cleanRow(columns, values);
        line = lead + values.map((v, i) => fields[i]!(v)).join("\t");
      }
      out += `${line}\n`;
    }
    return out;
  };
}
