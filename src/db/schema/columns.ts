// Column helpers shared by the warehouse tables (DESIGN.md section 3).
// Column keys are the database names (snake_case of the API field), so a row object, the
// drizzle table and the SQL all use one name.
import { bigint, doublePrecision, jsonb, type PgColumn, type PgColumnBuilderBase, pgTable, timestamp, unique } from "drizzle-orm/pg-core";

/** timestamptz read as Date: epoch-ms fields of the API land here. */
export const ts = () => timestamp({ withTimezone: true, mode: "date" });
/** bigint for pcode, hashes and oids (signed 32-bit hashes, pcode beyond 2^31). */
export const i64 = () => bigint({ mode: "number" });
/** double precision for measures (the API sends several of them as strings). */
export const f64 = () => doublePrecision();

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
export const windowColumns = () => ({
  pcode: i64().notNull(),
  window_start: ts().notNull(),
  window_end: ts().notNull(),
});

/**
 * A windowed-aggregate table: pcode + window + record columns + fact columns, unique on
 * (pcode, window_start, window_end, ...record key). The key leads with (pcode, window_start), so
 * it also serves BI queries by project and time; no second index is kept (it would only slow
 * down ingestion). NULLS NOT DISTINCT: a record missing a hash still cannot be stored twice.
 */
export function windowedTable<N extends string, C extends Record<string, PgColumnBuilderBase>>(
  name: N,
  columns: C,
  key: readonly (keyof C & string)[],
) {
  return pgTable(name, { ...windowColumns(), ...columns, ...factColumns() }, (t) => {
    const col = (k: string) => (t as unknown as Record<string, PgColumn>)[k]!;
    return [
      unique(`${name}_window_key`)
        .on(col("pcode"), col("window_start"), col("window_end"), ...key.map(col))
        .nullsNotDistinct(),
    ];
  });
}

/** Sentinel oid of the averaged metric series (objectMerge avg): those points belong to no agent. */
export const AVG_SERIES_OID = 0;
