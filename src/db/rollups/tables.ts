// The rollup tables (declared in src/db/rollups/spec.ts): pcode, the scope columns, the bucket, the
// keys and labels with the raw table's types and the measures; and the share of each bucket the
// ledger covers, in a table of its own (one row per bucket, not per key).
import { getTableName } from "drizzle-orm";
import {
  boolean,
  getTableConfig,
  index,
  integer,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTable,
  pgTable,
  primaryKey,
  text,
  unique,
} from "drizzle-orm/pg-core";
import { metricPoints } from "../../catalogue/series.ts";
import { statError, statHttpc, statRemote, statSql, statTransaction } from "../../catalogue/stats.ts";
import { f64, i64, ts } from "../../kernel/sql-types.ts";
import { partitionedByMonth } from "../../kernel/tables.ts";
import { COVERAGE_TABLE, MARKS_TABLE, OPEN_DAYS_TABLE, ROLLUPS, type RollupGrain, rollupTableName } from "./spec.ts";

const BUILDERS: Readonly<Record<string, () => PgColumnBuilderBase>> = {
  bigint: i64,
  integer: () => integer(),
  "double precision": f64,
  text: () => text(),
  "timestamp with time zone": ts,
};

/** A column of the rollup with the raw column's type. */
function like(source: PgTable, column: string): PgColumnBuilderBase {
  const type = getTableConfig(source)
    .columns.find((c) => c.name === column)
    ?.getSQLType();
  const build = type ? BUILDERS[type] : undefined;
  if (!build) throw new Error(`rollup of ${getTableName(source)}: no column ${column} of a type a rollup can carry (${type})`);
  return build();
}

/** The rollup table of `source` (its raw table: the keys, labels and scope take their types from it). */
function rollupTable(source: PgTable, grain: RollupGrain) {
  const spec = ROLLUPS.find((r) => r.source === getTableName(source))!;
  const name = rollupTableName(spec, grain);
  const columns: Record<string, PgColumnBuilderBase> = { pcode: i64().notNull() };
  for (const c of spec.scope) columns[c] = like(source, c);
  columns.bucket_start = ts().notNull();
  for (const c of [...spec.keys, ...spec.labels]) columns[c] = like(source, c);
  for (const [c, m] of Object.entries(spec.measures)) columns[c] = m.type === "bigint" ? i64() : f64();
  const key = ["pcode", ...spec.scope, "bucket_start", ...spec.keys];
  const table = pgTable(name, columns, (t) => {
    const col = (k: string) => (t as unknown as Record<string, PgColumn>)[k]!;
    return [
      // Per project and time: the key leads with (pcode, bucket_start).
      unique(`${name}_key`)
        .on(col(key[0]!), ...key.slice(1).map(col))
        .nullsNotDistinct(),
      // All projects over a recent range (a dashboard's "all" project variable): a month's
      // partition of a large account holds every project's buckets; this reads only the range's.
      index(`${name}_bucket_idx`).on(col("bucket_start")),
    ];
  });
  // Partitioned by month like the raw tables: a bucket lies in the month of its rows, and the
  // rollups' own retention (rollup.hourly, rollup.daily) drops whole months.
  return partitionedByMonth(table, "bucket_start" as never);
}

// Named exports: drizzle-kit finds a table only as an export of a schema file.
export const rollupStatTransactionHourly = rollupTable(statTransaction, "hourly");
export const rollupStatTransactionDaily = rollupTable(statTransaction, "daily");
export const rollupStatSqlHourly = rollupTable(statSql, "hourly");
export const rollupStatSqlDaily = rollupTable(statSql, "daily");
export const rollupStatHttpcHourly = rollupTable(statHttpc, "hourly");
export const rollupStatHttpcDaily = rollupTable(statHttpc, "daily");
export const rollupStatErrorHourly = rollupTable(statError, "hourly");
export const rollupStatErrorDaily = rollupTable(statError, "daily");
export const rollupStatRemoteHourly = rollupTable(statRemote, "hourly");
export const rollupStatRemoteDaily = rollupTable(statRemote, "daily");
export const rollupMetricPointsHourly = rollupTable(metricPoints, "hourly");
export const rollupMetricPointsDaily = rollupTable(metricPoints, "daily");

/** The share (0..1) of each daily bucket of a stream and project that the ledger covers. */
export const rollupCoverage = pgTable(
  COVERAGE_TABLE,
  {
    stream: text().notNull(),
    pcode: i64().notNull(),
    grain: text().notNull(),
    bucket_start: ts().notNull(),
    coverage: f64().notNull(),
  },
  (t) => [
    primaryKey({ name: `${COVERAGE_TABLE}_pkey`, columns: [t.stream, t.pcode, t.grain, t.bucket_start] }),
    // The views' join reads a project's buckets from this index alone (an index-only scan), so a
    // year of buckets costs about as little to read as a month.
    index(`${COVERAGE_TABLE}_read_idx`).on(t.stream, t.pcode, t.grain, t.bucket_start, t.coverage),
  ],
);

/**
 * The hours written since their rollup buckets were last refreshed (src/db/rollups): appended by
 * the windows' transactions (several rows for an hour are fine), taken by the refresher. The views
 * compute a marked bucket from the raw rows. `partial`: the window's rows are not whole hours (a
 * split leaf, a window off the hour): a statistic's hourly table must hold the hour (true where
 * unknown, as for the marks of older releases).
 */
export const rollupMarks = pgTable(
  MARKS_TABLE,
  {
    source: text().notNull(),
    pcode: i64().notNull(),
    hour: ts().notNull(),
    partial: boolean().notNull().default(true),
  },
  (t) => [index(`${MARKS_TABLE}_idx`).on(t.source, t.pcode, t.hour)],
);

/**
 * The previous releases' open days (days their daily views computed when read): made into marks
 * and emptied by migration 0018; kept, empty, until no view of an older release can read it.
 */
export const rollupOpenDays = pgTable(
  OPEN_DAYS_TABLE,
  {
    source: text().notNull(),
    pcode: i64().notNull(),
    bucket_start: ts().notNull(),
  },
  (t) => [primaryKey({ name: `${OPEN_DAYS_TABLE}_pkey`, columns: [t.source, t.pcode, t.bucket_start] })],
);
