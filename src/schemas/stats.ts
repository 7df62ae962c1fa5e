// v2 aggregated statistics (spec "Aggregated statistics records"). No samples exist; numbers may
// arrive as strings, so every measure goes through `num`. Hash keys and the count are required;
// counts (`count`, `error`) are never negative (recordCount: such a record is quarantined).
import { z } from "zod";
import { objectEnvelope, recordsArray } from "./envelope.ts";
import { count, epochMs, int, int32, num, oidList, recordCount } from "./primitives.ts";
import { opt, recordSchema } from "./record.ts";

const str = z.string();
const measures = <K extends string>(...keys: K[]) =>
  Object.fromEntries(keys.map((k) => [k, opt(num)])) as Record<K, ReturnType<typeof opt<typeof num>>>;

// `total` counts every matching record, `retrievedTotal` those returned (spec rule 3): a total
// below it is a lie about the answer, and the window is not recorded on its word.
export const statsEnvelope = objectEnvelope(
  z
    .looseObject({ stime: opt(int), etime: opt(int), timestamp: opt(int), total: count, retrievedTotal: count, data: recordsArray })
    .superRefine((e, ctx) => {
      if (e.total < e.retrievedTotal)
        ctx.addIssue({
          code: "custom",
          path: ["total"],
          message: `${e.total} is below retrievedTotal ${e.retrievedTotal}`,
          input: e.total,
        });
    }),
);

const timing = measures("timeAvg", "timeSum", "timeMin", "timeMax", "timeStdev");

export const statTransactionShape = {
  serviceHash: int32,
  service: opt(str),
  count: recordCount,
  error: opt(recordCount),
  ...timing,
  ...measures("sqlCount", "sqlCountAvg", "sqlTime", "sqlTimeAvg", "txSqlTimeAvg", "sqlFetch", "sqlFetchAvg", "sqlFetchTime"),
  ...measures("sqlFetchTimeAvg", "txSqlFetchTimeAvg", "httpcCount", "httpcCountAvg", "httpcTime", "httpcTimeAvg", "txHttpcTimeAvg"),
  ...measures("memAvg", "cpuAvg", "apdexSatisfied", "apdexTolerated", "apdex"),
};

export const statSqlShape = {
  sqlHash: int32,
  dbcHash: int32,
  sql: opt(str),
  db: opt(str),
  count: recordCount,
  error: opt(recordCount),
  ...timing,
  ...measures("fetchCount", "fetchCountAvg", "fetchTime", "fetchTimeAvg"),
  serviceHash: opt(int32),
  service: opt(str),
  crudMetrics: opt(str),
};

export const statHttpcShape = {
  urlHash: int32,
  hostHash: int32,
  url: opt(str),
  host: opt(str),
  port: opt(int),
  count: recordCount,
  error: opt(recordCount),
  ...timing,
  serviceHash: opt(int32),
  service: opt(str),
};

const list = opt(z.array(z.unknown()));
export const statErrorShape = {
  classHash: int32,
  msgHash: int32,
  class: opt(str),
  msg: opt(str),
  errorSnapId: opt(z.union([str, z.number(), z.bigint()]).transform(String)),
  count: recordCount,
  time: opt(epochMs),
  serviceHash: opt(int32),
  service: opt(str),
  oids: opt(oidList),
  onames: opt(z.array(str)),
  okinds: list,
  okindNames: list,
  onodes: list,
  onodeNames: list,
};

export const statRemoteShape = { ip: str, country: opt(str), city: opt(str), count: recordCount };

export const STAT_SHAPES = {
  transaction: statTransactionShape,
  sql: statSqlShape,
  httpc: statHttpcShape,
  error: statErrorShape,
  remote: statRemoteShape,
} as const;

export const statRecords = {
  transaction: recordSchema(statTransactionShape),
  sql: recordSchema(statSqlShape),
  httpc: recordSchema(statHttpcShape),
  error: recordSchema(statErrorShape),
  remote: recordSchema(statRemoteShape),
} as const;

const base = { stime: z.number().int().nonnegative(), etime: z.number().int().nonnegative(), order: z.string().optional() };

/** Request payload: stime, etime, order; `filter` (both host and port) only for httpc. */
export function statRequest(type: keyof typeof STAT_SHAPES) {
  const shape = type === "httpc" ? { ...base, filter: z.strictObject({ host: str, port: str }).optional() } : base;
  return z.strictObject(shape).refine((b) => b.etime - b.stime <= 86_400_000 && b.etime > b.stime, {
    message: "etime must be after stime and at most 24 hours later",
  });
}
