// The rollups' SQL, built from their declarations (spec.ts): the aggregates of a bucket over its
// raw rows, and the coverage of a bucket by the ledger. Shared by the views (views.ts) and the
// refresher (refresh.ts), so both compute a bucket the same way.
import { GONE_SQL, quoteLiteral as literal, quoteIdent as q } from "../sqlText.ts";
import { COVERAGE_TABLE, MARKS_TABLE, type RollupGrain, type RollupMeasure, type RollupSpec } from "./spec.ts";

const STEP: Readonly<Record<RollupGrain, string>> = { hourly: "hour", daily: "day" };
/**
 * A bucket's length as a fixed interval. `interval '1 day'` is a calendar day in the session's
 * time zone: where that zone keeps daylight saving (a server's TimeZone, a BI tool's session), a
 * UTC day plus it is 23 or 25 hours on the days clocks change, and a day's bucket lost an hour of
 * rows or took one from the next day. Hours are never calendar-adjusted.
 */
const LENGTH: Readonly<Record<RollupGrain, string>> = { hourly: "interval '1 hour'", daily: "interval '24 hours'" };

/** A ledger window spans at most a day (the statistics' API limit): only those starting in the day before a bucket can overlap it. */
export const COVERAGE_LOOKBEHIND_MS = 86_400_000;

/** The columns of a rollup row, in order. */
export function bucketColumns(spec: RollupSpec): string[] {
  return ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...Object.keys(spec.measures)];
}

/** What a measure sums or compares of a raw row (not a count). */
function rawValue(m: RollupMeasure): string {
  return m.times ? `h.${q(m.of!)} * h.${q(m.times)}` : `h.${q(m.of!)}`;
}

/** The aggregate of a measure over raw rows (alias h), as its column's type. */
function rawAggregate(m: RollupMeasure): string {
  if (m.agg === "count") return "count(*)";
  const agg = `${m.agg}(${rawValue(m)})${m.when ? ` FILTER (WHERE h.${q(m.when)} IS NOT NULL)` : ""}`;
  return m.type === "bigint" ? `${agg}::bigint` : agg;
}

/** A measure over one raw row (a bucket of one row): what rawAggregate gives for it. */
function rowValue(m: RollupMeasure): string {
  if (m.agg === "count") return "1::bigint";
  return m.when ? `CASE WHEN h.${q(m.when)} IS NOT NULL THEN ${rawValue(m)} END` : rawValue(m);
}

/** The test a statistics row (alias h) passes when it is a whole hour: a window of an hour or more that starts on the hour. */
export function wholeHour(spec: RollupSpec): string {
  const t = `h.${q(spec.time)}`;
  return `(${t} = date_trunc('hour', ${t}, 'UTC') AND h."window_end" >= ${t} + interval '1 hour')`;
}

/**
 * The raw rows (alias h) joined to `buckets` (a FROM item, alias b, with "pcode" and "at": a bucket
 * start of `grain`), grouped per project, scope, bucket and key: the bucket rows of those buckets.
 * `filter` narrows the raw rows (a statistic's split leaves).
 */
export function bucketsFromRaw(spec: RollupSpec, grain: RollupGrain, buckets: string, filter?: string): string {
  const group = ["pcode", ...spec.scope].map((c) => `h.${q(c)}`);
  const keys = spec.keys.map((k) => `h.${q(k)}`);
  const select = [
    ...group,
    `b."at"`,
    ...keys,
    ...spec.labels.map((c) => `max(h.${q(c)})`),
    ...Object.values(spec.measures).map(rawAggregate),
  ];
  const t = `h.${q(spec.time)}`;
  // An hour's rows are joined on their own hour too, so the server can hash the join on it: on the
  // project alone each row met every marked hour of its project (the 24 of a refreshed day, the
  // hundreds a view's marks can hold) and was tested against each. A day's marks are few, and
  // truncating each row to its day cost more than it saved (docs/benchmarks.md).
  const own = grain === "hourly" ? [`date_trunc('hour', ${t}, 'UTC') = b."at"`] : [];
  const on = [`h."pcode" = b."pcode"`, ...own, `${t} >= b."at"`, `${t} < b."at" + ${LENGTH[grain]}`, ...(filter ? [filter] : [])];
  return `SELECT ${select.join(", ")} FROM ${buckets} JOIN ${q(spec.source)} AS h ON ${on.join(" AND ")} GROUP BY ${[...group, `b."at"`, ...keys].join(", ")}`;
}

/**
 * The raw rows of whole hours as hourly rollup rows (a statistic's: read as they are, one row per
 * key; a whole hour is one window), `filter` on them (alias h).
 */
export function wholeHourRows(spec: RollupSpec, filter?: string): string {
  const columns = [
    ...["pcode", ...spec.scope].map((c) => `h.${q(c)}`),
    `h.${q(spec.time)}`,
    ...[...spec.keys, ...spec.labels].map((c) => `h.${q(c)}`),
    ...Object.values(spec.measures).map(rowValue),
  ];
  return `SELECT ${columns.join(", ")} FROM ${q(spec.source)} AS h WHERE ${filter ? `${filter} AND ` : ""}${wholeHour(spec)}`;
}

/** The marked buckets of `grain` of a rollup as a FROM item b("pcode", "at"). */
export function markedBuckets(spec: RollupSpec, grain: RollupGrain): string {
  return `(SELECT DISTINCT m."pcode", date_trunc('${STEP[grain]}', m."hour", 'UTC') AS "at" FROM ${q(MARKS_TABLE)} AS m WHERE m."source" = ${literal(spec.source)}) AS b`;
}

/**
 * Whether bucket `at` of `grain` of project `pcode` (SQL expressions; `at` a bucket's start) holds
 * a mark. The mark's own bucket start, equal to `at`, lets the server hash the anti-join of a
 * view's stored buckets on it: on the project alone each stored bucket was tested against every
 * mark of its project (docs/benchmarks.md).
 */
export function isMarked(spec: RollupSpec, grain: RollupGrain, pcode: string, at: string): string {
  return `EXISTS (SELECT 1 FROM ${q(MARKS_TABLE)} AS m WHERE m."source" = ${literal(spec.source)} AND m."pcode" = ${pcode}
    AND date_trunc('${STEP[grain]}', m."hour", 'UTC') = ${at} AND m."hour" >= ${at} AND m."hour" < ${at} + ${LENGTH[grain]})`;
}

/**
 * The share of bucket `at` of `grain` of project `pcode` (SQL expressions) that the done or truncated
 * ledger windows of `stream` cover, found by the ledger's window key.
 */
export function ledgerCoverage(grain: RollupGrain, stream: string, pcode: string, at: string): string {
  const step = LENGTH[grain];
  return `(SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", ${at} + ${step}) - greatest(w."window_start", ${at}))), 0)
    / extract(epoch FROM ${step})) FROM "sync_windows" AS w WHERE w."stream" = ${literal(stream)} AND w."pcode" = ${pcode} AND w."partition" = ''
    AND w."status" <> 'failed' AND w."status" NOT IN ${GONE_SQL} AND w."window_start" > ${at} - interval '${COVERAGE_LOOKBEHIND_MS / 1000} seconds'
    AND w."window_start" < ${at} + ${step} AND w."window_end" > ${at})`;
}

/** The stored coverage of a refreshed bucket; 0 where none is stored. */
export function storedCoverage(grain: RollupGrain, stream: string, pcode: string, at: string): string {
  return `coalesce((SELECT c."coverage" FROM ${q(COVERAGE_TABLE)} AS c WHERE c."stream" = ${literal(stream)} AND c."grain" = '${grain}'
    AND c."pcode" = ${pcode} AND c."bucket_start" = ${at}), 0)`;
}
