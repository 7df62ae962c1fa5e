// The visitors family, in one place (spec "Visitor results"): visitor counts per 5 minutes, hour and
// day, and unique users per month. Their columns (declared once: src/kernel/declare.ts), tables,
// dictionary entries, envelopes and operations. A visitor record is a [timestamp, count] pair, and a
// month's stime/etime are renamed: not row-shaped, so the record schemas are written here.
import { getTableName } from "drizzle-orm";
import { pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, local, tableOf } from "../kernel/declare.ts";
import { EPOCH_MS } from "../kernel/docs.ts";
import { epochMs, int, javaDate, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { i64, ts } from "../kernel/sql-types.ts";
import { docEntry, factColumns, partitionedByMonth } from "../kernel/tables.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { DAY, defineOperation, type OperationDef } from "./types.ts";

// ---- Columns ----

const CONSTANT = "the catalogue entry's constant";

/** Visitor points (after pcode): one [timestamp, count] pair each. */
export const visitorColumns = columns({
  granularity: local(() => textColumn().notNull(), {
    text: "5m, h or d: the operation the point came from (visitor_5m, visitor_h, visitor_d).",
    conversion: CONSTANT,
  }),
  ts: local(() => ts().notNull(), {
    field: "data[i][0]",
    text: "Time of the point: the first element of a [timestamp, count] pair (alignment to the bucket is not documented).",
    conversion: EPOCH_MS,
  }),
  count: local(i64, {
    field: "data[i][1]",
    text: "Visitors: users who produced a transaction within the last 5 minutes (the spec's definition); how hourly and daily points merge them is not documented.",
    unit: "users",
  }),
});

/** One month of unique users (after pcode); stime and etime are renamed month_start and month_end. */
export const visitorMonthColumns = columns({
  month_start: local(() => ts().notNull(), { field: "data[].stime", text: "Start of the month.", conversion: EPOCH_MS }),
  month_end: local(ts, { field: "data[].etime", text: "End of the month.", conversion: EPOCH_MS }),
  sdate: local(textColumn, {
    field: "data[].sdate",
    text: "Start of the month as the response writes it (string form of stime).",
    conversion: 'Java date text ("Sat Sep 01 00:00:00 GMT 2018") parsed, stored as ISO 8601 UTC text (2018-09-01T00:00:00.000Z)',
  }),
  edate: local(textColumn, {
    field: "data[].edate",
    text: "End of the month as the response writes it (string form of etime).",
    conversion: "Java date text parsed, stored as ISO 8601 UTC text",
  }),
  mau: local(i64, { field: "data[].mau", text: "Unique users in the month.", unit: "users" }),
});

// ---- Tables: points ----

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

// ---- The dictionary's entries (the group is series.ts's) ----

export const visitorDocs = [
  docEntry(visitors, "Visitor counts per 5 minutes, hour and day (granularity 5m, h, d).", visitorColumns),
  docEntry(
    visitorsMonthly,
    "Unique users per month (visitor_m); one request re-reads a year, since a month's count changes until it ends.",
    visitorMonthColumns,
  ),
];

// ---- Envelopes and records ----

const str = z.string();

// Visitors 5m/h/d: data is a list of [timestamp, count] pairs.
const visitorsEnvelope = objectEnvelope(
  z.looseObject({ pcode: opt(pcode), stime: opt(int), etime: opt(int), total: opt(int), data: recordsArray }),
);
const visitorPoint = z.tuple([epochMs, int]);

/** Row of visitors: granularity, ts, count, extra. */
function visitorExplode(granularity: string) {
  return ([ts, count]: z.output<typeof visitorPoint>) => [{ granularity, ts, count, extra: {} }];
}

const visitorsMonthlyEnvelope = objectEnvelope(
  z.looseObject({
    pcode: opt(pcode),
    stime: opt(int),
    etime: opt(int),
    sdate: opt(str),
    edate: opt(str),
    total: opt(int),
    data: recordsArray,
  }),
);
// Renamed on the way to the row (stime -> month_start, etime -> month_end): not the columns' shape.
const visitorMonthRecord = recordSchema({
  stime: epochMs,
  etime: opt(epochMs),
  sdate: opt(javaDate), // "Sat Sep 01 00:00:00 GMT 2018"
  edate: opt(javaDate),
  mau: int,
});

/** Row of visitors_monthly: month_start, month_end, sdate, edate, mau, extra. */
function visitorMonthExplode(month: z.output<typeof visitorMonthRecord>) {
  const { stime, etime, ...rest } = month;
  return [{ month_start: stime, month_end: etime, ...rest }];
}

// ---- Operations ----

const VISITORS = [
  { g: "5m", limit: DAY, grain: DAY, table: visitors },
  { g: "h", limit: DAY, grain: DAY, table: visitors },
  { g: "d", limit: 31 * DAY, grain: 7 * DAY, table: visitors },
  // Monthly unique users change until the month ends: one request re-reads the whole year.
  { g: "m", limit: 365 * DAY, grain: 365 * DAY, table: visitorsMonthly },
] as const;

export const visitorOperations: OperationDef[] = VISITORS.map(({ g, limit, grain, table }) =>
  defineOperation({
    id: `visitors.${g}`,
    summary: `visitors per ${g}`,
    area: "visitors",
    method: "GET",
    path: `/open/api/json/visitor_${g}/{stime}/{etime}`,
    token: "project",
    sendsPcode: true,
    format: "json",
    windowLimitMs: limit,
    inSpec: true,
    envelope: g === "m" ? visitorsMonthlyEnvelope : visitorsEnvelope,
    records:
      g === "m"
        ? { at: "data", schema: visitorMonthRecord, explode: visitorMonthExplode }
        : { at: "data", schema: visitorPoint, explode: visitorExplode(g) },
    stream: {
      kind: "points",
      table: getTableName(table),
      enabledByDefault: true,
      grainMs: grain,
      lookbackMs: grain,
      ...(g === "m" ? {} : { constants: { granularity: g } }),
    },
  }),
);
