// Windowed points: upserted by point key, so re-fetching a window is harmless. The columns are
// declared once, with their meanings, in catalogue/dictionary/series.ts.

import { sql } from "drizzle-orm";
import { check, index, pgTable, primaryKey } from "drizzle-orm/pg-core";
import { metricPointColumns, visitorColumns, visitorMonthColumns } from "../../catalogue/dictionary/series.ts";
import { tableOf } from "../../kernel/declare.ts";
import { i64 } from "../../kernel/sql-types.ts";
import { factColumns, partitionedByMonth } from "../../kernel/tables.ts";

/** Metric series points; per-agent series (`agent`) and averaged series (`avg`, oid 0). Partitioned by month on ts. */
export const metricPoints = partitionedByMonth(
  pgTable("metric_points", { pcode: i64().notNull(), ...tableOf(metricPointColumns), ...factColumns() }, (t) => [
    primaryKey({ columns: [t.pcode, t.metric, t.series_form, t.oid, t.ts] }),
    index("metric_points_pcode_ts_idx").on(t.pcode, t.ts),
    check("metric_points_series_form_check", sql`${t.series_form} in ('agent', 'avg')`),
  ]),
  "ts",
);

/** Visitor counts per 5 minutes, hour and day (granularity `5m`, `h`, `d`). Partitioned by month on ts. */
export const visitors = partitionedByMonth(
  pgTable("visitors", { pcode: i64().notNull(), ...tableOf(visitorColumns), ...factColumns() }, (t) => [
    primaryKey({ columns: [t.pcode, t.granularity, t.ts] }),
  ]),
  "ts",
);

/** Monthly unique users. */
export const visitorsMonthly = pgTable(
  "visitors_monthly",
  { pcode: i64().notNull(), ...tableOf(visitorMonthColumns), ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.month_start] })],
);
