// Axis titles say the unit the data dictionary gives a column, and say so when the API documents
// none: the report must not invent one (time_sum was drawn as "total time (s)", divided by 1000,
// though the spec never says the times are milliseconds).
import { DICTIONARY } from "../dictionary/index.ts";
import { UNDOCUMENTED } from "../kernel/docs.ts";

/** The dictionary's unit of `table.column`; null when it gives none. Throws for an unknown column (a renamed one). */
export function unitOf(table: string, column: string): string | null {
  const col = DICTIONARY.find((r) => r.name === table)?.columns.find((c) => c.name === column);
  if (!col) throw new Error(`the data dictionary has no column ${table}.${column}`);
  return col.unit;
}

/** "what (unit)", or "what, unit not documented" when the API names none. */
export function axisTitle(what: string, table: string, column: string): string {
  const unit = unitOf(table, column);
  if (unit === null || unit === "count") return what;
  return unit === UNDOCUMENTED ? `${what}, unit not documented` : `${what} (${unit})`;
}
