// The vocabulary of the data dictionary (issue 18 item 4): what a column means, its unit, the API
// field it is read from and what the parser does to the value on the way in. The text is the
// API spec's and the service documentation's (docs/api-notes.md); where they say
// nothing the entry says "not documented" instead of guessing.

/** One column of a warehouse table or view. */
export interface ColumnDoc {
  /** The meaning. A field the spec lists by name only carries NAME_ONLY. */
  readonly text: string;
  /** Unit of a measure; UNDOCUMENTED where the spec gives none. Absent for names, keys, flags and times. */
  readonly unit?: string;
  /** The API field the value comes from, spelled as the response spells it (`timeSum`, `Service_hash`). */
  readonly field?: string;
  /** What the parser or the writer does to the value (string -> number, epoch ms -> timestamptz, ...). */
  readonly conversion?: string;
}

/** A column of a relation drizzle does not define (views, drizzle's own table): it states its SQL type. */
export interface TypedColumnDoc extends ColumnDoc {
  readonly type: string;
}

/** A table of src/db/schema: its columns and their types come from the drizzle definition. */
export interface TableDoc {
  readonly description: string;
  /** Table-specific columns; the shared ones (shared.ts) need no entry unless their meaning differs. */
  readonly columns: Readonly<Record<string, ColumnDoc>>;
}

/** A view (migrations/*.sql) or a table drizzle does not define: every column, in order, with its type. */
export interface DeclaredDoc {
  readonly kind: "table" | "view";
  readonly description: string;
  readonly columns: Readonly<Record<string, TypedColumnDoc>>;
}

/** Relations shown together in docs/warehouse.md. */
export interface DocGroup {
  readonly title: string;
  readonly tables?: Readonly<Record<string, TableDoc>>;
  readonly declared?: Readonly<Record<string, DeclaredDoc>>;
}

export const UNDOCUMENTED = "not documented";
/** Marks a field the spec lists without saying what it is: the text reads its name, and says so. */
export const NAME_ONLY = "not documented: name only";

// What the parser does (src/kernel/primitives.ts), in one wording each.
export const EPOCH_MS = "epoch milliseconds, stored as timestamptz (UTC)";
/** Only where the docs or their samples show the string form; every number column accepts a numeric string. */
export const AS_NUMBER = 'sent as a string ("600.0"), stored as a number';
export const HASH32 = "signed 32-bit value (negative values are normal), stored as bigint";
export const LOWERED = "lower-cased (the API may send a capital first letter)";
export const ANY_TIME = "epoch ms, ISO text (zone-less read as UTC) or Java date text, stored as timestamptz (UTC)";
export const JSON_KEPT = "kept as JSON (element shape not documented)";

/** The stream column of the tables that name a window as the ledger does (the ledger, restatements). */
export const STREAM = "Stream id as printed by `apm-sync streams` (the catalogue operation, e.g. stat.transaction).";

/** The partition column of the tables that name a window as the ledger does. */
export const PARTITION =
  "Partition of the stream: '' unless it has several (a host/port or tx filter, a fanned-out project code or group key).";
