// The warehouse tables by name, and each table's column types read from its drizzle definition
// so the SQL builders never restate them.
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import * as accountFamily from "../catalogue/account.ts";
import * as agentFamily from "../catalogue/agents.ts";
import * as callFamily from "../catalogue/calls.ts";
import * as eventSettingsFamily from "../catalogue/event-settings.ts";
import * as eventFamily from "../catalogue/events.ts";
import * as projectFamily from "../catalogue/project.ts";
import * as range from "../catalogue/range.ts";
import * as seriesFamily from "../catalogue/series.ts";
import * as statFamily from "../catalogue/stats.ts";
import * as visitorFamily from "../catalogue/visitors.ts";
import { BOOKKEEPING_COLUMNS, MANAGED_COLUMNS, partitioningOf, WINDOW_COLUMNS } from "../kernel/tables.ts";
import * as history from "./history/tables.ts";
import * as rollups from "./rollups/tables.ts";
import * as ledger from "./schema/ledger.ts";

/** The tables among a module's exports (a stream family declares its columns, tables and operations together). */
function tablesOf<M extends Record<string, unknown>>(module: M): { [K in keyof M as M[K] extends PgTable ? K : never]: M[K] } {
  return Object.fromEntries(Object.entries(module).filter(([, v]) => is(v, PgTable))) as never;
}

/** Every table of the warehouse, as one drizzle schema object (for `drizzle(client, { schema })`). */
export const warehouse = {
  ...tablesOf(accountFamily),
  ...tablesOf(projectFamily),
  ...tablesOf(agentFamily),
  ...tablesOf(eventSettingsFamily),
  ...tablesOf(eventFamily),
  ...tablesOf(range),
  ...tablesOf(statFamily),
  ...tablesOf(callFamily),
  ...tablesOf(seriesFamily),
  ...tablesOf(visitorFamily),
  ...tablesOf(ledger),
  ...tablesOf(rollups),
  ...tablesOf(history),
};

/** A table given by its SQL name (as in the catalogue's `stream.table`) or its drizzle object. */
export type TableRef = string | PgTable;

/** SQL name and column types of one table. */
export interface TableInfo {
  readonly name: string;
  /** SQL type per column name, e.g. `bigint`, `timestamp with time zone`, `bigint[]`. */
  readonly types: ReadonlyMap<string, string>;
  /** Columns the engine writes from records and requests: every column but the managed ones. */
  readonly writable: readonly string[];
  /** Columns whose change alone does not make an upsert rewrite a row (src/kernel/tables.ts). */
  readonly bookkeeping: ReadonlySet<string>;
  /** The columns that place an aggregate row in its window (none for other tables). */
  readonly window: readonly string[];
  readonly hasDeletedAt: boolean;
  readonly hasLastSeenAt: boolean;
  readonly hasSyncedAt: boolean;
  /**
   * The time column the table is range-partitioned on by month (db/schema: partitionedByMonth),
   * or null. Its rows' values decide which partitions a write needs (db/partitions/ensurePartitions.ts).
   */
  readonly partitionColumn: string | null;
  /** The rest of the key identifies a row; its time may change (db/schema: partitionedByMonth). */
  readonly movable: boolean;
  /** How far a row's partition time may lie outside its window (db/schema: Partitioning.slack); null when not partitioned. */
  readonly slack: { readonly before: number; readonly after: number } | null;
}

// A serial is a column default (a sequence), not a type: the column is stored, cast and shown by
// the database (information_schema, \d) as its integer type.
const STORED: Readonly<Record<string, string>> = { smallserial: "smallint", serial: "integer", bigserial: "bigint" };

const byName = new Map<string, TableInfo>();
for (const value of Object.values(warehouse)) {
  const info = describe(value as PgTable);
  byName.set(info.name, info);
}

function describe(table: PgTable): TableInfo {
  const config = getTableConfig(table);
  const types = new Map(config.columns.map((c) => [c.name, STORED[c.getSQLType()] ?? c.getSQLType()]));
  const windowed = WINDOW_COLUMNS.every((c) => types.has(c));
  return {
    name: config.name,
    types,
    writable: [...types.keys()].filter((c) => !MANAGED_COLUMNS.includes(c)),
    bookkeeping: new Set(BOOKKEEPING_COLUMNS),
    window: windowed ? WINDOW_COLUMNS : [],
    hasDeletedAt: types.has("deleted_at"),
    hasLastSeenAt: types.has("last_seen_at"),
    hasSyncedAt: types.has("synced_at"),
    partitionColumn: partitioningOf(table)?.column ?? null,
    movable: partitioningOf(table)?.movable === true,
    slack: partitioningOf(table)?.slack ?? null,
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

/** The tables partitioned by month, each with its partition column. */
export function partitionedTables(): (TableInfo & { readonly partitionColumn: string })[] {
  return [...byName.values()].filter((t): t is TableInfo & { partitionColumn: string } => t.partitionColumn !== null);
}
