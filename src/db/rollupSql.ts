// Pure SQL of the rollups (tested as strings). A write of one project's rows over a time range is
// followed, in its transaction, by statements that keep the rollups equal to a GROUP BY of the raw
// rows: first the daily rows of the keys the range's hours touch (hours written for the first time
// add their share to the days: a backfill's usual case, no read of the day's other hours; hours
// written again recompute those keys' days), then the hourly buckets of the range from the raw
// rows, and the share of each bucket the ledger covers. The same aggregates fill a warehouse's
// history once (migrate).

import { alignDown, alignUp, DAY_MS, HOUR_MS } from "../windows/grid.ts";
import { COVERAGE_TABLE, type RollupGrain, type RollupMeasure, type RollupSpec, rollupTableName } from "./rollups.ts";
import { quoteIdent } from "./sqlText.ts";

const q = quoteIdent;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
const STEP: Readonly<Record<RollupGrain, string>> = { hourly: "hour", daily: "day" };

/** What a measure sums or compares of a raw row (not a count). */
function rawValue(m: RollupMeasure): string {
  return m.times ? `${q(m.of!)} * ${q(m.times)}` : q(m.of!);
}

/** The aggregate of a measure over the raw rows of an hourly bucket. */
function rawAggregate(m: RollupMeasure): string {
  if (m.agg === "count") return "count(*)";
  return `${m.agg}(${rawValue(m)})${m.when ? ` FILTER (WHERE ${q(m.when)} IS NOT NULL)` : ""}`;
}

/** The daily aggregate of a measure over the hourly rows (a count adds up). */
function reAggregate(column: string, m: RollupMeasure): string {
  return `${m.agg === "count" ? "sum" : m.agg}(${q(column)})`;
}

/** The project ($1) and the scope values ($4...), columns of `alias`. */
function pinned(spec: RollupSpec, alias = ""): string {
  return [`${alias}${q("pcode")} = $1::bigint`, ...spec.scope.map((s, i) => `${alias}${q(s)} = $${i + 4}`)].join(" AND ");
}

/** pinned, and the range ($2, $3) on `time`. */
function where(spec: RollupSpec, time: string, alias = ""): string {
  return `${pinned(spec, alias)} AND ${alias}${q(time)} >= $2::timestamptz AND ${alias}${q(time)} < $3::timestamptz`;
}

const HOUR_DAY = `date_trunc('day', h."bucket_start", 'UTC')`;

/** The days holding the hours [from, to) (SQL expressions): their first start and the end of the last. */
const daysOf = (from: string, to: string) => ({
  from: `date_trunc('day', ${from}, 'UTC')`,
  to: `date_trunc('day', ${to} - interval '1 microsecond', 'UTC') + interval '1 day'`,
});
const DAYS = daysOf("$2::timestamptz", "$3::timestamptz");

/**
 * The bucket rows of `grain` grouped from `from`: the daily ones from the hourly rollup, the hourly
 * ones from the raw rows, and the raw rows' days when `fromRaw` (their share of a day), filtered by `filter`.
 */
function grouped(spec: RollupSpec, grain: RollupGrain, filter: string, fromRaw = grain === "hourly"): string {
  const from = fromRaw ? q(spec.source) : q(rollupTableName(spec, "hourly"));
  const bucket = `date_trunc('${STEP[grain]}', h.${q(fromRaw ? spec.time : "bucket_start")}, 'UTC')`;
  const group = ["pcode", ...spec.scope].map((c) => `h.${q(c)}`);
  const keys = spec.keys.map((k) => `h.${q(k)}`);
  const select = [
    ...group,
    bucket,
    ...keys,
    ...spec.labels.map((c) => `max(h.${q(c)})`),
    ...Object.entries(spec.measures).map(([c, m]) => (fromRaw ? rawAggregate(m) : reAggregate(c, m))),
  ];
  return `SELECT ${select.join(", ")} FROM ${from} AS h${filter ? ` WHERE ${filter}` : ""} GROUP BY ${[...group, bucket, ...keys].join(", ")}`;
}

function insertInto(spec: RollupSpec, grain: RollupGrain, rows: string, alias = ""): string {
  return `INSERT INTO ${q(rollupTableName(spec, grain))}${alias && ` AS ${alias}`} (${bucketColumns(spec).map(q).join(", ")}) ${rows}`;
}

/** The unique key of a rollup's rows. */
function uniqueKey(spec: RollupSpec): string {
  return ["pcode", ...spec.scope, "bucket_start", ...spec.keys].map(q).join(", ");
}

/** The columns of a rollup row, in order. */
function bucketColumns(spec: RollupSpec): string[] {
  return ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...Object.keys(spec.measures)];
}

/** A raw row's share of a measure, in the form of an hourly row's (a count is 1; NULL where the measure skips the row). */
function rawPart(m: RollupMeasure): string {
  if (m.agg === "count") return "1::bigint";
  return m.when ? `CASE WHEN ${q(m.when)} IS NOT NULL THEN ${rawValue(m)} END` : rawValue(m);
}

/** Whether the hours [$2, $3) have hourly rows (rows of an earlier write of them). */
function staleHours(spec: RollupSpec): string {
  return `EXISTS (SELECT 1 FROM ${q(rollupTableName(spec, "hourly"))} AS s WHERE ${where(spec, "bucket_start", "s.")})`;
}

/** A day's merged measure: `d` (the stored day) and EXCLUDED (the new hours' share). */
function merged(column: string, m: RollupMeasure): string {
  const [d, x] = [`d.${q(column)}`, `EXCLUDED.${q(column)}`];
  if (m.agg === "min") return `least(${d}, ${x})`;
  if (m.agg === "max") return `greatest(${d}, ${x})`;
  return `coalesce(${d} + ${x}, ${d}, ${x})`;
}

/**
 * Hours written for the first time (no hourly rows yet: a backfill's usual case) add their raw
 * rows' share to the days' rows: sums and counts add up, extremes compare, without reading the
 * day's other hours.
 */
function mergeDays(spec: RollupSpec): string {
  const set = [
    ...spec.labels.map((c) => `${q(c)} = greatest(d.${q(c)}, EXCLUDED.${q(c)})`),
    ...Object.entries(spec.measures).map(([c, m]) => `${q(c)} = ${merged(c, m)}`),
  ];
  const rows = grouped(spec, "daily", `${where(spec, spec.time, "h.")} AND NOT ${staleHours(spec)}`, true);
  return `${insertInto(spec, "daily", rows, "d")} ON CONFLICT (${uniqueKey(spec)}) DO UPDATE SET ${set.join(", ")}`;
}

/**
 * The daily rows of the keys the hours [$2, $3) held or now hold, computed again before the hours
 * are: from the day's other hourly rows and the raw rows of those hours (the rows the hours will be
 * computed from), in one pass over the day without a join. Each row of the pass is an other hour's
 * (0), a stale hour's (1, counted for nothing but the key) or a raw row (2). A key left with no row
 * loses its daily row.
 */
function refreshDays(spec: RollupSpec): string {
  const group = ["pcode", ...spec.scope];
  const measures = Object.entries(spec.measures);
  const hours = `SELECT ${[...group.map((c) => `h.${q(c)}`), `${HOUR_DAY} AS "day"`, ...[...spec.keys, ...spec.labels, ...measures.map(([c]) => c)].map((c) => `h.${q(c)}`)].join(", ")},
    CASE WHEN h."bucket_start" >= $2::timestamptz AND h."bucket_start" < $3::timestamptz THEN 1 ELSE 0 END AS "t"
  FROM ${q(rollupTableName(spec, "hourly"))} AS h WHERE ${pinned(spec, "h.")} AND h."bucket_start" >= ${DAYS.from} AND h."bucket_start" < ${DAYS.to}`;
  const raw = `SELECT ${[...group.map(q), `date_trunc('day', ${q(spec.time)}, 'UTC')`, ...[...spec.keys, ...spec.labels].map(q), ...measures.map(([, m]) => rawPart(m))].join(", ")}, 2
  FROM ${q(spec.source)} WHERE ${where(spec, spec.time)}`;
  const live = `FILTER (WHERE "t" <> 1)`;
  const days = `SELECT ${[...group, "day", ...spec.keys].map(q).join(", ")}, ${[
    ...spec.labels.map((c) => `max(${q(c)}) ${live} AS ${q(c)}`),
    ...measures.map(([c, m]) => `${reAggregate(c, m)} ${live} AS ${q(c)}`),
  ].join(", ")}, count(*) ${live} AS "n"
  FROM (${hours} UNION ALL ${raw}) AS p WHERE ${staleHours(spec)} GROUP BY ${[...group, "day", ...spec.keys].map(q).join(", ")} HAVING max("t") > 0`;
  const set = [...spec.labels, ...measures.map(([c]) => c)].map((c) => `${q(c)} = EXCLUDED.${q(c)}`).join(", ");
  const values = bucketColumns(spec).map((c) => (c === "bucket_start" ? '"day"' : q(c)));
  const sameKeys = [...group, ...spec.keys].map((k) => `d.${q(k)} IS NOT DISTINCT FROM z.${q(k)}`).join(" AND ");
  return `WITH "days" AS (${days}),
"kept" AS (${insertInto(spec, "daily", `SELECT ${values.join(", ")} FROM "days" WHERE "n" > 0`)} ON CONFLICT (${uniqueKey(spec)}) DO UPDATE SET ${set})
DELETE FROM ${q(rollupTableName(spec, "daily"))} AS d USING "days" AS z WHERE z."n" = 0 AND ${pinned(spec, "d.")} AND d."bucket_start" = z."day" AND ${sameKeys}`;
}

/**
 * The hourly rows of the range from the raw rows; each row of a rollup with a coverage carries its
 * hour's, computed once per hour from the ledger of `stream` (which the window's transaction has
 * just written). A write recomputes every hour it touches, so an hour's coverage is always that of
 * its rows' last write.
 */
function insertHours(spec: RollupSpec, stream: string): string {
  const rows = grouped(spec, "hourly", where(spec, spec.time, "h."));
  if (!spec.coverage) return insertInto(spec, "hourly", rows);
  const columns = bucketColumns(spec);
  // MATERIALIZED: each hour's coverage is computed once, not once per row joined to it.
  const hours = bucketsCovered("hourly", literal(stream), "$1::bigint", "$2::timestamptz", "$3::timestamptz");
  return `WITH "c" AS MATERIALIZED (${hours})
INSERT INTO ${q(rollupTableName(spec, "hourly"))} (${[...columns, "coverage"].map(q).join(", ")})
SELECT g.*, c."coverage" FROM (${rows}) AS g(${columns.map(q).join(", ")}) JOIN "c" ON c."at" = g."bucket_start"`;
}

/**
 * The statements that bring the rollups of one project and scope up to date after its raw rows
 * over a range changed, in order; `stream` is the one whose ledger the coverage reads. Parameters:
 * pcode, the range's start and end on the hourly grid, then the scope values.
 */
export function refreshStatements(spec: RollupSpec, stream: string): string[] {
  return [
    mergeDays(spec),
    refreshDays(spec),
    `DELETE FROM ${q(rollupTableName(spec, "hourly"))} WHERE ${where(spec, "bucket_start")}`,
    insertHours(spec, stream),
  ];
}

/** The INSERT that fills a rollup from the whole history at once (a migration): hourly from the raw rows, daily from the hourly. */
export function fillBuckets(spec: RollupSpec, grain: RollupGrain): string {
  return insertInto(spec, grain, grouped(spec, grain, ""));
}

/**
 * A ledger window spans at most a day (the statistics' API limit; a test holds every stream with a
 * coverage rollup to it), so only windows starting in the day before a bucket can overlap it: the
 * ledger's key index reads that range, not the stream's whole history.
 */
export const COVERAGE_LOOKBEHIND_MS = DAY_MS;

/**
 * The share of bucket `at` of project `pcode` (SQL expressions) covered by the done or truncated
 * ledger windows of stream `stream`, found by the ledger's window key (its status index holds only
 * windows that are not done: 0011).
 */
function coverageOf(grain: RollupGrain, stream: string, pcode: string, at: string): string {
  const step = `interval '1 ${STEP[grain]}'`;
  return `(SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", ${at} + ${step}) - greatest(w."window_start", ${at}))), 0)
    / extract(epoch FROM ${step})) FROM "sync_windows" AS w WHERE w."stream" = ${stream} AND w."pcode" = ${pcode} AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > ${at} - interval '${COVERAGE_LOOKBEHIND_MS / 1000} seconds'
    AND w."window_start" < ${at} + ${step} AND w."window_end" > ${at})`;
}

/** Each `grain` bucket of [from, to) (SQL expressions, on the grain's grid) as "at", with its "coverage". */
function bucketsCovered(grain: RollupGrain, stream: string, pcode: string, from: string, to: string): string {
  const step = `interval '1 ${STEP[grain]}'`;
  return `SELECT b."at", ${coverageOf(grain, stream, pcode, 'b."at"')} AS "coverage"
  FROM generate_series(${from}, ${to} - ${step}, ${step}) AS b("at")`;
}

/**
 * The coverage of the days holding the hours [$3, $4) of stream $1 and project $2, computed again
 * from the ledger (which the window's transaction has just written). An hour's is written with its
 * rows (insertHours).
 */
export function refreshDayCoverage(): string {
  const days = daysOf("$3::timestamptz", "$4::timestamptz");
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT $1::text, $2::bigint, 'daily', c."at", c."coverage" FROM (${bucketsCovered("daily", "$1::text", "$2::bigint", days.from, days.to)}) AS c
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`;
}

/** The INSERT that fills the coverage of every bucket of a rollup from the ledger at once (a migration). */
export function fillCoverage(spec: RollupSpec, grain: RollupGrain, stream: string): string {
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, r."pcode", '${grain}', r."bucket_start", ${coverageOf(grain, literal(stream), 'r."pcode"', 'r."bucket_start"')}
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM ${q(rollupTableName(spec, grain))}) AS r`;
}

/** The first bucket start at or before `ms`, and the first at or after it (UTC). */
export function bucketRange(grain: RollupGrain, fromMs: number, toMs: number): { from: number; to: number } {
  const size = grain === "hourly" ? HOUR_MS : DAY_MS;
  return { from: alignDown(fromMs, size), to: alignUp(toMs, size) };
}
