// Column helpers shared by the warehouse tables (docs/design.md "Warehouse contract").
// Column keys are the database names (snake_case of the API field), so a row object, the
// drizzle table and the SQL all use one name.

import { getTableName } from "drizzle-orm";
import { index, jsonb, type PgColumn, type PgColumnBuilderBase, type PgTable, pgTable, text, unique } from "drizzle-orm/pg-core";
import { columns, type Declaration, docsOf, keyOf, local, tableOf } from "./declare.ts";
import { PARTITION, STREAM, type TableDoc } from "./docs.ts";
import { i64, ts } from "./sql-types.ts";

/** Carried by every API-fed row: unknown fields (never dropped), the run that wrote it, and when. */
export const factColumns = () => ({
  extra: jsonb().notNull().default({}),
  run_id: i64(),
  synced_at: ts().notNull().defaultNow(),
});

/** Dimensions keep a soft-delete marker: rows missing from a complete list get deleted_at. */
export const dimensionColumns = () => ({
  ...factColumns(),
  first_seen_at: ts().notNull().defaultNow(),
  last_seen_at: ts().notNull().defaultNow(),
  deleted_at: ts(),
});

/** The window a windowed-aggregate row was fetched for; re-fetching the window replaces it. */
const windowColumns = () => ({
  pcode: i64().notNull(),
  window_start: ts().notNull(),
  window_end: ts().notNull(),
});

/**
 * A window as the ledger names it (sync_windows, sync_attempts, restatements): the stream, its
 * project (0 for the account), its partition ('' unless the stream has several) and the window;
 * `start` says what window_start is where it means more.
 */
export function ledgerWindow(start = "Start (inclusive) of the window, UTC.") {
  return columns({
    stream: local(() => text().notNull(), STREAM),
    pcode: local(() => i64().notNull(), "Project code; 0 for account-level streams."),
    partition: local(() => text().notNull().default(""), PARTITION),
    window_start: local(() => ts().notNull(), start),
    window_end: local(() => ts().notNull(), "End (exclusive) of the window, UTC."),
  });
}

/** The ledger window's columns as drizzle builds them. */
export const ledgerWindowColumns = () => tableOf(ledgerWindow());

// drizzle-kit cannot declare a partitioned table: the declaration lives here, next to the drizzle
// definition it belongs to, and the migrations (migrations/0005_partitions.sql) and the write path
// (db/partitions/ensurePartitions.ts) read it through tables.ts.
const partitionColumns = new WeakMap<PgTable, Partitioning>();

/** How a table is partitioned by month. */
export interface Partitioning {
  readonly column: string;
  readonly movable: boolean;
  /**
   * How far (ms) a row's time may lie outside the window it was fetched for: before its start,
   * and after its end. A row beyond is quarantined, and a write makes partitions only for the
   * months of its window so widened (engine/window-rows.ts): a server's stray timestamps cannot
   * shape the warehouse.
   */
  readonly slack: { readonly before: number; readonly after: number };
}

/** Default slack: a point on the hour before or after its window (a server's cube boundaries). */
export const ROW_TIME_SLACK_MS = 3_600_000;

/**
 * Declares `table` range-partitioned by calendar month (UTC) on the time column `column`
 * (docs/design.md "Time partitions"). Every unique key of the table must
 * contain `column` (a Postgres rule for partitioned tables). `movable`: the rest of the key
 * identifies a row, the time is in it only for that rule; a row arriving with another time
 * replaces the stored one (db/write/rowSink.ts) instead of becoming a second row. `before`: how long
 * before its window a row's time may lie (Partitioning.slack; default ROW_TIME_SLACK_MS).
 */
export function partitionedByMonth<T extends PgTable>(
  table: T,
  column: keyof T["_"]["columns"] & string,
  opts: { movable?: boolean; before?: number } = {},
): T {
  const slack = { before: opts.before ?? ROW_TIME_SLACK_MS, after: ROW_TIME_SLACK_MS };
  partitionColumns.set(table, { column, movable: opts.movable === true, slack });
  return table;
}

/** How `table` is partitioned, or null for a table that is not. */
export function partitioningOf(table: PgTable): Partitioning | null {
  return partitionColumns.get(table) ?? null;
}

/**
 * A windowed-aggregate table: pcode + window + the declared columns + fact columns, unique on
 * (pcode, window_start, window_end, ...the declared key). The key leads with (pcode, window_start), so
 * it also serves BI queries by project and time; no second index is kept (it would only slow
 * down ingestion). NULLS NOT DISTINCT: a record missing a hash still cannot be stored twice.
 * Partitioned by month on window_start: a window's rows live in one partition, and a window of a
 * grain up to a day never crosses a month.
 */
export function windowedTable<N extends string, D extends Declaration>(name: N, declaration: D, opts: WindowedOptions = {}) {
  return windowed(name, tableOf(declaration), keyOf(declaration), opts);
}

export interface WindowedOptions {
  /**
   * Read by time alone for all projects (the hourly views of a rollup that reads its hours from
   * the raw rows: src/db/rollups/spec.ts `hoursFromRaw`, which a test holds to this): indexed on
   * window_start too.
   */
  readonly readByTime?: boolean;
}

function windowed<N extends string, C extends Record<string, PgColumnBuilderBase>>(
  name: N,
  columns: C,
  key: readonly string[],
  opts: WindowedOptions,
) {
  if (key.length === 0) throw new Error(`windowed table ${name} declares no key column`);
  const table = pgTable(name, { ...windowColumns(), ...columns, ...factColumns() }, (t) => {
    const col = (k: string) => (t as unknown as Record<string, PgColumn>)[k]!;
    const window = unique(`${name}_window_key`)
      .on(col("pcode"), col("window_start"), col("window_end"), ...key.map(col))
      .nullsNotDistinct();
    // The hourly views of a rollup read from these rows (src/db/rollups/views.ts) filter
    // them by time alone for all projects: without this index a recent range reads its month's
    // partition whole. (A BRIN index, cheaper to write, was tried: its ranges are summarised only
    // by a later vacuum, so the planner took it over the key for one project's rows and read the
    // whole partition.)
    if (!opts.readByTime) return [window];
    return [window, index(`${name}_window_start_idx`).on(col("window_start"))];
  });
  return partitionedByMonth(table, "window_start");
}

/**
 * Column roles, declared once here beside the helpers that create the columns; the writers read
 * them from TableInfo (src/db/tables.ts).
 * - managed: set by the writer or a default (upsert, soft delete), never taken from a record;
 * - bookkeeping: rewritten by every upsert, but a change in them alone is no change of the row;
 * - window: where an aggregate row belongs, the same on every row of one fetched (sub-)window.
 */
export const MANAGED_COLUMNS: readonly string[] = ["synced_at", "first_seen_at", "last_seen_at", "deleted_at"];
export const BOOKKEEPING_COLUMNS: readonly string[] = [...MANAGED_COLUMNS, "run_id"];
export const WINDOW_COLUMNS: readonly string[] = Object.keys(windowColumns());

/** Sentinel oid of the averaged metric series (objectMerge avg): those points belong to no agent. */
export const AVG_SERIES_OID = 0;

/** A table's dictionary entry keyed by its SQL name, which is written once: in the table's declaration. */
export function docEntry(table: PgTable, description: string, declaration: Declaration): [string, TableDoc] {
  return [getTableName(table), { description, columns: docsOf(declaration) }];
}
