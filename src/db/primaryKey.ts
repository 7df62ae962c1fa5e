// The natural key of a warehouse table, read from its drizzle definition (never restated).
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { warehouse } from "./tables.ts";

const keys = new Map<string, string[]>();
for (const value of Object.values(warehouse)) {
  if (typeof value !== "object" || value === null) continue;
  const config = getTableConfig(value as PgTable);
  const composite = config.primaryKeys[0]?.columns.map((c) => c.name);
  const single = config.columns.filter((c) => c.primary).map((c) => c.name);
  keys.set(config.name, composite ?? single);
}

/** Primary-key columns of a table by SQL name; throws for a table without one. */
export function primaryKey(table: string): readonly string[] {
  const key = keys.get(table);
  if (!key || key.length === 0) throw new Error(`table ${table} has no primary key`);
  return key;
}
