// The warehouse tables by name, and each table's column types read from its drizzle definition
// so the SQL builders never restate them.
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import * as account from "./schema/account.ts";
import * as ledger from "./schema/ledger.ts";
import * as points from "./schema/points.ts";
import * as project from "./schema/project.ts";
import * as range from "./schema/range.ts";
import * as stats from "./schema/stats.ts";

/** Every table of the warehouse, as one drizzle schema object (for `drizzle(client, { schema })`). */
export const warehouse = { ...account, ...project, ...range, ...stats, ...points, ...ledger };

/** A table given by its SQL name (as in the catalogue's `stream.table`) or its drizzle object. */
export type TableRef = string | PgTable;

/** SQL name and column types of one table. */
export interface TableInfo {
  readonly name: string;
  /** SQL type per column name, e.g. `bigint`, `timestamp with time zone`, `bigint[]`. */
  readonly types: ReadonlyMap<string, string>;
  readonly hasDeletedAt: boolean;
  readonly hasLastSeenAt: boolean;
  readonly hasSyncedAt: boolean;
}

const byName = new Map<string, TableInfo>();
for (const value of Object.values(warehouse)) {
  if (typeof value !== "object" || value === null) continue;
  const info = describe(value as PgTable);
  byName.set(info.name, info);
}

function describe(table: PgTable): TableInfo {
  const config = getTableConfig(table);
  const types = new Map(config.columns.map((c) => [c.name, c.getSQLType()]));
  return {
    name: config.name,
    types,
    hasDeletedAt: types.has("deleted_at"),
    hasLastSeenAt: types.has("last_seen_at"),
    hasSyncedAt: types.has("synced_at"),
  };
}

/** Column types of a warehouse table; throws for a name that is not one (a programming error). */
export function tableInfo(table: TableRef): TableInfo {
  const name = typeof table === "string" ? table : getTableConfig(table).name;
  const info = byName.get(name);
  if (!info) throw new Error(`not a warehouse table: ${name}`);
  return info;
}

/** Names of every warehouse table. */
export function tableNames(): string[] {
  return [...byName.keys()];
}
