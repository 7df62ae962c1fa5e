// Rows -> one JSON text parameter per batch, typed by the target columns, for
// json_to_recordset: no per-row round trips and no 65,535-parameter limit.
import type { TableInfo } from "./tables.ts";

/** A row keyed by database column name. */
export type Row = Readonly<Record<string, unknown>>;

/** Rows per statement: ~5,000 keeps each JSON parameter at a few MB. */
export const BATCH_ROWS = 5000;

const TIMESTAMPTZ = "timestamp with time zone";
// A bigint is sent as a bare JSON number (exact: Postgres parses the digits itself); JSON.stringify
// cannot print one, so it goes through a marker that is unquoted afterwards.
const BIG_MARK = "\u0001big:";
const BIG_RE = /"\\u0001big:(-?\d+)"/g;

/** Converts a value for one column: epoch ms for timestamptz columns become ISO strings. */
function convert(value: unknown, type: string): unknown {
  if (value === undefined) return null;
  if (type === TIMESTAMPTZ && typeof value === "number") return new Date(value).toISOString();
  return value;
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return BIG_MARK + value.toString();
  return value;
}

/**
 * Serialises `rows` restricted to `columns` (missing values become null). Dates become ISO
 * strings, epoch-ms numbers in timestamptz columns too, bigint stays an exact number, nested
 * values of jsonb columns are kept as JSON.
 */
export function rowsToJson(info: TableInfo, columns: readonly string[], rows: readonly Row[]): string {
  const types = columns.map((c) => info.types.get(c) ?? "");
  const out = rows.map((row) => {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!;
      const v = convert(row[c], types[i]!);
      o[c] = typeof v === "bigint" ? BIG_MARK + v.toString() : v;
    }
    return o;
  });
  // A replacer function runs for every value: only pay for it when a nested bigint needs it.
  let text: string;
  try {
    text = JSON.stringify(out);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    text = JSON.stringify(out, replacer);
  }
  return text.includes("\\u0001big:") ? text.replace(BIG_RE, "$1") : text;
}

/** Splits rows into batches of at most `size`. */
export function chunk<T>(rows: readonly T[], size = BATCH_ROWS): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
