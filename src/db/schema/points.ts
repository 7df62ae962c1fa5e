// Windowed points: upserted by point key, so re-fetching a window is harmless.

import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { f64, factColumns, i64, partitionedByMonth, ts } from "./columns.ts";

/** Metric series points; per-agent series (`agent`) and averaged series (`avg`, oid 0). Partitioned by month on ts. */
export const metricPoints = partitionedByMonth(
  pgTable(
    "metric_points",
    {
      pcode: i64().notNull(),
      metric: text().notNull(),
      series_form: text().notNull(),
      oid: i64().notNull(),
      ts: ts().notNull(),
      value: f64(),
      oname: text(),
      /** Seconds between points as reported (`interval`). */
      interval: integer(),
      ...factColumns(),
    },
    (t) => [
      primaryKey({ columns: [t.pcode, t.metric, t.series_form, t.oid, t.ts] }),
      index("metric_points_pcode_ts_idx").on(t.pcode, t.ts),
      check("metric_points_series_form_check", sql`${t.series_form} in ('agent', 'avg')`),
    ],
  ),
  "ts",
);

/** Visitor counts per 5 minutes, hour and day (granularity `5m`, `h`, `d`). Partitioned by month on ts. */
export const visitors = partitionedByMonth(
  pgTable(
    "visitors",
    { pcode: i64().notNull(), granularity: text().notNull(), ts: ts().notNull(), count: i64(), ...factColumns() },
    (t) => [primaryKey({ columns: [t.pcode, t.granularity, t.ts] })],
  ),
  "ts",
);

/** Monthly unique users; sdate/edate are Java Date text and kept as sent. */
export const visitorsMonthly = pgTable(
  "visitors_monthly",
  {
    pcode: i64().notNull(),
    month_start: ts().notNull(),
    month_end: ts(),
    sdate: text(),
    edate: text(),
    mau: i64(),
    ...factColumns(),
  },
  (t) => [primaryKey({ columns: [t.pcode, t.month_start] })],
);
