// One declaration per column of a stream's table (issue 32.3): its API field, how the parser reads
// it (zod), its SQL type (drizzle) and what it means (the data dictionary), written once. The
// record schema (src/schemas), the table (src/db/schema) and the dictionary entry are derived:
//
//   const sql = columns({ hash: hash("Hash of the statement.").key, sql: text(named("SQL statement.")) });
//   recordOf(sql);                          // the record schema (its zod shape, shapeOf, keyed by API field)
//   windowedTable("x", sql);                // drizzle columns (tableOf) and unique key (keyOf)
//   { description, columns: docsOf(sql) }   // the dictionary entry, with the API field filled in
//
// A field a stream stores under another name says so (`.storedAs("pcode")`); the stream's `rename`
// comes from it (`renamesOf`).
//
// A declaration is keyed by the API field (`dbcHash`, `Service_hash`, `agent.version`): the column is
// its snake_case (the one rule of src/kernel/record.ts). A column no record field fills (a request
// input, a constant of the catalogue entry, a value of the envelope) is keyed by its column name
// and declared with `local`: it has a type and a meaning but no zod. Keys are in the table's column
// order; the record schema reads the fields in the same order.
import { boolean, integer, jsonb, type PgColumnBuilderBase, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { type ColumnDoc, EPOCH_MS, HASH32, JSON_KEPT, NAME_ONLY, UNDOCUMENTED } from "./docs.ts";
import { bool, epochMs, int, int32, num, recordCount } from "./primitives.ts";
import { opt, type RecordOptions, recordSchema, type SnakeCase, snakeCase } from "./record.ts";
import { f64, i64, ts } from "./sql-types.ts";

/** What a column means, without the API field (the declaration's key supplies it). */
export type Meaning = Omit<ColumnDoc, "field">;

/**
 * One column: read from an API field with `zod` (null: not from a record field), stored as `pg`,
 * under the snake_case of its key or, where the stream renames the field, under `column`; `inKey`:
 * part of what identifies a row (a windowed table's unique key: `keyOf`).
 */
export class Column<Z extends z.ZodType | null, B extends PgColumnBuilderBase, N extends string | null = null> {
  constructor(
    readonly zod: Z,
    readonly pg: () => B,
    readonly doc: ColumnDoc,
    readonly column: N = null as N,
    readonly inKey = false,
  ) {}

  /** The same column, its field allowed to be absent or null (null in the row). */
  get optional(): Column<Z extends z.ZodType ? z.ZodOptional<z.ZodNullable<Z>> : null, B, N> {
    if (this.zod === null) throw new Error("a local column has no field to be optional");
    return new Column(opt(this.zod) as never, this.pg, this.doc, this.column, this.inKey);
  }

  /** The same column, part of the row's key. */
  get key(): Column<Z, B, N> {
    return new Column(this.zod, this.pg, this.doc, this.column, true);
  }

  /** The field stored under another column name (the stream renames it: `renamesOf`). */
  storedAs<C extends string>(column: C): Column<Z, B, C> {
    return new Column(this.zod, this.pg, this.doc, column, this.inKey);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the declaration's own types are kept by the mapped types below
type AnyColumn = Column<any, PgColumnBuilderBase, any>;
export type Declaration = Readonly<Record<string, AnyColumn>>;

/** The column a declaration's key is stored in. */
const columnName = (key: string, c: AnyColumn): string => c.column ?? snakeCase(key);

/** Checks a declaration (no two keys on one column, no field that maps to `extra`) and returns it. */
export function columns<const D extends Declaration>(declaration: D): D {
  const seen = new Map<string, string>();
  for (const [key, c] of Object.entries(declaration)) {
    const name = columnName(key, c);
    const clash = seen.get(name);
    if (clash !== undefined || name === "extra") throw new Error(`columns ${clash ?? ""} and ${key} both map to ${name}`);
    seen.set(name, key);
  }
  return declaration;
}

/** The key columns, in declaration order (a windowed table's unique key after its window). */
export function keyOf(declaration: Declaration): string[] {
  return Object.entries(declaration).flatMap(([key, c]) => (c.inKey ? [columnName(key, c)] : []));
}

/** The renames of a stream whose record fields are stored under other names (StreamSpec.rename). */
export function renamesOf(declaration: Declaration): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(declaration).flatMap(([key, c]) => (c.column === null ? [] : [[snakeCase(key), c.column]])));
}

/** The zod shape of a record: its API fields, in column order (local columns have none). */
export function shapeOf<D extends Declaration>(declaration: D) {
  const shape = Object.fromEntries(Object.entries(declaration).flatMap(([key, c]) => (c.zod === null ? [] : [[key, c.zod]])));
  return shape as { [K in keyof D as D[K]["zod"] extends null ? never : K]: NonNullable<D[K]["zod"]> };
}

/** The record schema of a stream whose records are rows of the table (src/kernel/record.ts). */
export function recordOf<D extends Declaration, Drop extends keyof ReturnType<typeof shapeOf<D>> & string = never>(
  declaration: D,
  options: RecordOptions<Drop> = {},
) {
  return recordSchema(shapeOf(declaration), options);
}

/** The drizzle columns of the table, keyed by column name. */
export function tableOf<D extends Declaration>(declaration: D) {
  const built = Object.fromEntries(Object.entries(declaration).map(([key, c]) => [columnName(key, c), c.pg()]));
  return built as { [K in keyof D & string as D[K]["column"] extends string ? D[K]["column"] : SnakeCase<K>]: ReturnType<D[K]["pg"]> };
}

/**
 * The dictionary's words for each column, the API field filled in from the key (a `field` in the
 * doc wins: a field the API spells two ways names both, "eventTitle / event_title").
 */
export function docsOf(declaration: Declaration): Readonly<Record<string, ColumnDoc>> {
  return Object.fromEntries(
    Object.entries(declaration).map(([key, c]) => [columnName(key, c), c.zod === null ? c.doc : { field: key, ...c.doc }]),
  );
}

// ---- Meanings ----

/** A meaning the spec states. */
export function says(text: string, more: Omit<Meaning, "text"> = {}): Meaning {
  return { text, ...more };
}

/** A field the spec names without a meaning: `reading` is what the name says, flagged as such. */
export function named(reading: string, more: Omit<Meaning, "text"> = {}): Meaning {
  // "Rule (METRICS)." -> "Rule (METRICS; not documented: name only)."
  const bare = reading.replace(/\.$/, "");
  const text = bare.endsWith(")") ? `${bare.slice(0, -1)}; ${NAME_ONLY}).` : `${bare} (${NAME_ONLY}).`;
  return { text, ...more };
}

const meaning = (doc: ColumnDoc | string): ColumnDoc => (typeof doc === "string" ? { text: doc } : doc);

// ---- Columns, by what the API sends ----

/** A column of a field the API sends. */
export function of<Z extends z.ZodType, B extends PgColumnBuilderBase>(zod: Z, pg: () => B, doc: Meaning | string) {
  return new Column(zod, pg, meaning(doc));
}

/**
 * A column no record field fills: a request input, a catalogue constant, an envelope value (whose
 * field the doc may name).
 */
export function local<B extends PgColumnBuilderBase>(pg: () => B, doc: ColumnDoc | string) {
  return new Column(null, pg, meaning(doc));
}

/** A signed 32-bit hash or identifier, required; stored as bigint. */
export const hash = (text: string) => of(int32, i64, { text, conversion: HASH32 });

/** A count the spec names without a meaning, required and never negative. */
export const tally = (reading: string) => of(recordCount, i64, named(reading, { unit: "count" }));

/** A measure the spec names without a unit, optional; numbers sent as strings are read. */
export const measure = (reading: string, conversion?: string) =>
  of(opt(num), f64, named(reading, conversion ? { unit: UNDOCUMENTED, conversion } : { unit: UNDOCUMENTED }));

/** Text, optional. */
export const text = (doc: Meaning | string) => of(opt(z.string()), textColumn, doc);

/** A safe integer, optional (numbers sent as strings are read). */
export const integerOf = (doc: Meaning | string) => of(opt(int), integer, doc);

/** A flag, optional ("true"/"false" strings are read). */
export const flag = (doc: Meaning | string) => of(opt(bool), boolean, doc);

/** An epoch-ms time, optional; stored as timestamptz. */
export const epoch = (doc: Meaning | string, conversion = EPOCH_MS) => of(opt(epochMs), ts, { ...meaning(doc), conversion });

/** A list of undocumented element shape, optional; kept as JSON. */
export const jsonList = (doc: Meaning | string) => of(opt(z.array(z.unknown())), jsonb, { ...meaning(doc), conversion: JSON_KEPT });
