// The natural key of a warehouse table, read from its drizzle definition (never restated):
// the primary key, or for windowed tables their `<table>_window_key` unique constraint.
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { warehouse } from "../tables.ts";

const keys = new Map<string, string[]>();
for (const value of Object.values(warehouse)) {
  if (typeof value !== "object" || value === null) continue;
  const config = getTableConfig(value as PgTable);
  const composite = config.primaryKeys[0]?.columns.map((c) => c.name);
  const single = config.columns.filter((c) => c.primary).map((c) => c.name);
  const unique = config.uniqueConstraints[0]?.columns.map((c) => c.name);
  keys.set(config.name, composite ?? (single.length > 0 ? single : (unique ?? [])));
}

/** Natural-key columns of a table by SQL name; throws for a table without one. */
export function naturalKey(table: string): readonly string[] {
  const key = keys.get(table);
  if (!key || key.length === 0) throw new Error(`table ${table} has no natural key`);
  return key;
}
