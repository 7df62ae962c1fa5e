// Pure SQL of the rollups (tested as strings). A write of one project's rows over a time range is
// followed, in its transaction, by statements that keep the rollups equal to a GROUP BY of the raw
// rows: the hourly buckets of the range from the raw rows with the share of each the ledger covers,
// then the days holding them: a day the ledger covers wholly is computed from its hourly rows into
// the daily table; a day not wholly covered yet (the current day, a backfill under way) is open,
// and the daily views compute it from the hourly rows when read. A day is thus written once when
// its last hour arrives, not once per hour. The same aggregates fill a warehouse's history once
// (migrate).

import { alignDown, alignUp, DAY_MS, HOUR_MS } from "../windows/grid.ts";
import { COVERAGE_TABLE, OPEN_DAYS_TABLE, type RollupGrain, type RollupMeasure, type RollupSpec, rollupTableName } from "./rollups.ts";
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

/** The days holding the hours [from, to) (SQL expressions): their first start and the end of the last. */
const daysOf = (from: string, to: string) => ({
  from: `date_trunc('day', ${from}, 'UTC')`,
  to: `date_trunc('day', ${to} - interval '1 microsecond', 'UTC') + interval '1 day'`,
});
const DAYS = daysOf("$2::timestamptz", "$3::timestamptz");

/** The bucket rows of `grain`, filtered by `filter`: the hourly ones from the raw rows, the daily ones from the hourly rollup. */
function grouped(spec: RollupSpec, grain: RollupGrain, filter: string): string {
  const fromRaw = grain === "hourly";
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

function insertInto(spec: RollupSpec, grain: RollupGrain, rows: string): string {
  return `INSERT INTO ${q(rollupTableName(spec, grain))} (${bucketColumns(spec).map(q).join(", ")}) ${rows}`;
}

/** The columns of a rollup row, in order. */
function bucketColumns(spec: RollupSpec): string[] {
  return ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...Object.keys(spec.measures)];
}

/**
 * The daily rows grouped from the hourly rows of the days `days` lists (a FROM item with a "day"
 * column and the filter that picks them, SQL): the days a window completes (rollupSql's
 * completeDays), or the open days a daily view computes live (views of migration 0012).
 */
export function daysFromHours(spec: RollupSpec, days: string, filter?: string): string {
  const hourly = q(rollupTableName(spec, "hourly"));
  const group = ["pcode", ...spec.scope].map((c) => `h.${q(c)}`);
  const keys = spec.keys.map((k) => `h.${q(k)}`);
  // Counts are bigint in the table; sum() of bigint is numeric.
  const measures = Object.entries(spec.measures).map(([c, m]) => `${reAggregate(c, m)}${m.type === "bigint" ? "::bigint" : ""}`);
  const select = [...group, 'o."day"', ...keys, ...spec.labels.map((c) => `max(h.${q(c)})`), ...measures];
  const joined = [
    ...group.map((c) => `${c} = o.${c.slice(2)}`),
    `h."bucket_start" >= o."day"`,
    `h."bucket_start" < o."day" + interval '1 day'`,
  ];
  return `SELECT ${select.join(", ")} FROM ${days} JOIN ${hourly} AS h ON ${joined.join(" AND ")}${filter ? ` WHERE ${filter}` : ""} GROUP BY ${[...group, 'o."day"', ...keys].join(", ")}`;
}

/**
 * A daily rollup's rows as its views read them: the daily table's, and the open days' computed from
 * the hourly rows (migration 0012 holds this text for each statistic).
 */
export function dailyRows(spec: RollupSpec): string {
  const open = `(SELECT o."pcode", o."bucket_start" AS "day" FROM ${q(OPEN_DAYS_TABLE)} AS o WHERE o."source" = ${literal(spec.source)}) AS o`;
  return `SELECT ${bucketColumns(spec).map(q).join(", ")} FROM ${q(rollupTableName(spec, "daily"))}
UNION ALL
${daysFromHours(spec, open)}`;
}

/**
 * Writes the open days before $1 into the daily table from their hourly rows, and unmarks them
 * (prune, before the hourly partitions holding them go); returns their count as "n".
 */
export function closeDays(spec: RollupSpec): string {
  return `WITH "closed" AS (DELETE FROM ${q(OPEN_DAYS_TABLE)} WHERE "source" = ${literal(spec.source)} AND "bucket_start" < $1::timestamptz
  RETURNING "pcode", "bucket_start" AS "day"),
"written" AS (${insertInto(spec, "daily", daysFromHours(spec, `"closed" AS o`))})
SELECT count(*)::int AS "n" FROM "closed"`;
}

/**
 * The days of the hours [$2, $3) whose rollup rows are kept in the daily table: each day of a
 * rollup without a coverage, a day the ledger covers wholly (coverage 1, written just before) of
 * one with. A day not wholly covered yet is open: the daily view computes it from the hourly rows.
 */
function completeDays(spec: RollupSpec, stream: string): { from: string; filter?: string } {
  const days = `generate_series(${DAYS.from}, ${DAYS.to} - interval '1 day', interval '1 day')`;
  const pin = spec.scope.map((s, i) => `, $${i + 4}::text AS ${q(s)}`).join("");
  if (!spec.coverage) return { from: `(SELECT $1::bigint AS "pcode"${pin}, d AS "day" FROM ${days} AS d) AS o` };
  return {
    from: `(SELECT c."pcode", c."bucket_start" AS "day", c."coverage" FROM ${q(COVERAGE_TABLE)} AS c WHERE c."stream" = ${literal(stream)} AND c."grain" = 'daily' AND c."pcode" = $1::bigint AND c."bucket_start" >= ${DAYS.from} AND c."bucket_start" < ${DAYS.to}) AS o`,
    filter: `o."coverage" >= 1`,
  };
}

/**
 * The days' coverage written again (refreshDayCoverage), and the open days of the range from what
 * it wrote, in one statement: the days the ledger does not cover wholly are marked, the others
 * unmarked (their rows go into the daily table next).
 */
function coverDays(spec: RollupSpec, stream: string): string {
  const open = q(OPEN_DAYS_TABLE);
  return `WITH "d" AS (${refreshDayCoverage(stream)}
RETURNING "bucket_start", "coverage" >= 1 AS "complete"),
"closed" AS (DELETE FROM ${open} AS o USING "d" WHERE o."source" = ${literal(spec.source)} AND o."pcode" = $1::bigint AND o."bucket_start" = d."bucket_start" AND d."complete")
INSERT INTO ${open} ("source", "pcode", "bucket_start") SELECT ${literal(spec.source)}, $1::bigint, d."bucket_start" FROM "d" WHERE NOT d."complete"
ON CONFLICT DO NOTHING`;
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
 * pcode, the range's start and end on the hourly grid, then the scope values. The hours are
 * computed again from the raw rows; then the days' coverage, which marks the days open or not;
 * then the days the range touches lose their rows and get them back from the hourly rows if they
 * are complete.
 */
export function refreshStatements(spec: RollupSpec, stream: string): string[] {
  const complete = completeDays(spec, stream);
  return [
    `DELETE FROM ${q(rollupTableName(spec, "hourly"))} WHERE ${where(spec, "bucket_start")}`,
    insertHours(spec, stream),
    ...(spec.coverage ? [coverDays(spec, stream)] : []),
    `DELETE FROM ${q(rollupTableName(spec, "daily"))} WHERE ${pinned(spec)} AND "bucket_start" >= ${DAYS.from} AND "bucket_start" < ${DAYS.to}`,
    insertInto(spec, "daily", daysFromHours(spec, complete.from, complete.filter)),
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
 * The coverage of the days holding the hours [$2, $3) of project $1, computed again from the
 * ledger of `stream` (which the window's transaction has just written). An hour's is written with
 * its rows (insertHours).
 */
export function refreshDayCoverage(stream: string): string {
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, $1::bigint, 'daily', c."at", c."coverage" FROM (${bucketsCovered("daily", literal(stream), "$1::bigint", DAYS.from, DAYS.to)}) AS c
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
