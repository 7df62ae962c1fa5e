// Metric series (per agent / averaged), visitors and the undocumented cross-project call statistics.
// The tables' columns are declared in catalogue/dictionary/series.ts; the records here are not
// row-shaped (a series explodes into points, a month's stime/etime are renamed, a call statistic
// is kept whole), so their schemas are written here, apart from the per-agent record's oid/oname.
import { z } from "zod";
import { metricPointColumns } from "../catalogue/dictionary/series.ts";
import { shapeOf } from "../kernel/declare.ts";
import { epochMs, int, javaDate, pcode, point } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { isNoData, objectEnvelope, recordsArray } from "./envelope.ts";

const str = z.string();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const seriesBase = {
  pcode: opt(pcode),
  type: opt(str), // literally "metric_type" in the docs example: not trusted for the metric name
  stime: opt(int),
  etime: opt(int),
  interval: opt(int), // seconds between points
  timeMerge: opt(str),
};

/** Renames `from` to `to` when only `from` is present (older servers' nested `data`, `op`). */
function rename(v: unknown, pairs: readonly (readonly [string, string])[]): unknown {
  if (!isObject(v)) return v;
  const out = { ...v };
  for (const [from, to] of pairs) {
    if (out[to] === undefined && out[from] !== undefined) {
      out[to] = out[from];
      delete out[from];
    }
  }
  return out;
}

// Older servers put the agents under `data` (and each agent's points under `data` again).
export const perAgentEnvelope = objectEnvelope(
  z.preprocess((v) => rename(v, [["data", "objects"]]), z.looseObject({ ...seriesBase, objects: recordsArray })),
);

// Older servers: `op` instead of `objectMerge`, `data` instead of `series`.
export const averagedEnvelope = objectEnvelope(
  z.preprocess(
    (v) =>
      rename(v, [
        ["data", "series"],
        ["op", "objectMerge"],
      ]),
    z.looseObject({ ...seriesBase, objectMerge: opt(str), series: recordsArray }),
  ),
);

// One agent's series: its oid and oname (the columns' own fields) and the points it explodes into.
export const agentSeriesRecord = z.preprocess(
  (v) => rename(v, [["data", "series"]]),
  recordSchema({ ...shapeOf(metricPointColumns), series: z.array(point) }),
);

/** Row of metric_points: metric, oid, oname, ts, value, extra (oid/oname null for averaged series). */
export interface MetricPoint {
  metric: string;
  oid: number | null;
  oname: string | null;
  ts: Date;
  value: number | null;
  extra: Record<string, unknown>;
}

export function agentSeriesExplode(metric: string) {
  return (agent: z.output<typeof agentSeriesRecord>): MetricPoint[] =>
    agent.series.map(([ts, value]) => ({ metric, oid: agent.oid, oname: agent.oname, ts, value, extra: agent.extra }));
}

export function averagedPointExplode(metric: string) {
  return ([ts, value]: z.output<typeof point>): MetricPoint[] => [{ metric, oid: null, oname: null, ts, value, extra: {} }];
}

// Visitors 5m/h/d: data is a list of [timestamp, count] pairs.
export const visitorsEnvelope = objectEnvelope(
  z.looseObject({ pcode: opt(pcode), stime: opt(int), etime: opt(int), total: opt(int), data: recordsArray }),
);
export const visitorPoint = z.tuple([epochMs, int]);

/** Row of visitors: granularity, ts, count, extra. */
export function visitorExplode(granularity: string) {
  return ([ts, count]: z.output<typeof visitorPoint>) => [{ granularity, ts, count, extra: {} }];
}

export const visitorsMonthlyEnvelope = objectEnvelope(
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
export const visitorMonthRecord = recordSchema({
  stime: epochMs,
  etime: opt(epochMs),
  sdate: opt(javaDate), // "Sat Sep 01 00:00:00 GMT 2018"
  edate: opt(javaDate),
  mau: int,
});

/** Row of visitors_monthly: month_start, month_end, sdate, edate, mau, extra. */
export function visitorMonthExplode(month: z.output<typeof visitorMonthRecord>) {
  const { stime, etime, ...rest } = month;
  return [{ month_start: stime, month_end: etime, ...rest }];
}

/**
 * tx_caller / tx_domain filtered: the response shape is undocumented, so the payload is kept as JSON.
 * One record per response: metric_type, payload, extra; null (no record) for an empty body.
 */
export function callsEnvelope(metricType: string) {
  return z
    .unknown()
    .transform((body) => (isNoData(body) ? null : { metric_type: metricType, payload: body, extra: {} as Record<string, unknown> }));
}
