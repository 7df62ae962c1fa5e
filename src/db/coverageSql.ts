// Pure SQL of the rollups' coverage (tested as strings): the share of an hourly or daily bucket of
// one project that the ledger of the stream writing it covers (done or truncated windows), read by
// the statistics' views. An hour's is a row of rollup_coverage, written by the windows of the
// hour; a day's is the sum of its hours' (a row only once the day is closed: rollupSql.ts), so that
// windows of one day in flight at once write no row in common.

import { DAY_MS } from "../windows/grid.ts";
import type { RollupGrain, RollupSpec } from "./rollups.ts";
import { COVERAGE_TABLE, OPEN_DAYS_TABLE, rollupTableName } from "./rollups.ts";
import { quoteLiteral as literal, quoteIdent } from "./sqlText.ts";

const q = quoteIdent;
export const STEP: Readonly<Record<RollupGrain, string>> = { hourly: "hour", daily: "day" };

/** The days holding the hours [from, to) (SQL expressions): their first start and the end of the last. */
const daysOf = (from: string, to: string) => ({
  from: `date_trunc('day', ${from}, 'UTC')`,
  to: `date_trunc('day', ${to} - interval '1 microsecond', 'UTC') + interval '1 day'`,
});

/** The buckets of each grain that a write of the hours [$2, $3) touches. */
export const TOUCHED: Readonly<Record<RollupGrain, { from: string; to: string }>> = {
  hourly: { from: "$2::timestamptz", to: "$3::timestamptz" },
  daily: daysOf("$2::timestamptz", "$3::timestamptz"),
};

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
 * The coverage of the hours [$2, $3) of project $1, computed again from the ledger of `stream`
 * (which the window's transaction has just written).
 */
export function refreshHourCoverage(stream: string): string {
  const { from, to } = TOUCHED.hourly;
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, $1::bigint, 'hourly', c."at", c."coverage" FROM (${bucketsCovered("hourly", literal(stream), "$1::bigint", from, to)}) AS c
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`;
}

/** The INSERT that filled the coverage of every bucket of a rollup from the ledger at once (migration 0007). */
export function fillCoverage(spec: RollupSpec, grain: RollupGrain, stream: string): string {
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, r."pcode", '${grain}', r."bucket_start", ${coverageOf(grain, literal(stream), 'r."pcode"', 'r."bucket_start"')}
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM ${q(rollupTableName(spec, grain))}) AS r`;
}

/** The sum of the coverages of day `at`'s hours (SQL expressions): 0 to 24, 24 when the ledger covers it wholly. */
export function hoursCovered(stream: string, pcode: string, at: string): string {
  return `(SELECT coalesce(sum(hc."coverage"), 0) FROM ${q(COVERAGE_TABLE)} AS hc WHERE hc."stream" = ${stream} AND hc."grain" = 'hourly'
    AND hc."pcode" = ${pcode} AND hc."bucket_start" >= ${at} AND hc."bucket_start" < ${at} + interval '1 day')`;
}

/** A daily view's coverage (rows alias r, the daily coverage rows alias c): a closed day's row, else its hours'. */
export function dayCoverageColumn(stream: string): string {
  return `coalesce(c."coverage", ${hoursCovered(literal(stream), 'r."pcode"', 'r."bucket_start"')} / 24) AS "coverage"`;
}

/** The days holding the hours [$2, $3) as d("at"). */
export const touchedDays = `generate_series(${TOUCHED.daily.from}, ${TOUCHED.daily.to} - interval '1 day', interval '1 day') AS d("at")`;

/**
 * The coverage of the hours [$2, $3) of project $1 written again from the ledger of `stream`; one
 * row ("alone") when the write can leave its days as they are without taking turns with the other
 * windows of the table and project: its hours were not covered before (not a re-fetch), and each of
 * its days is open and stays short of 24 covered hours with them. Then no other window can close
 * such a day before this one commits, and nothing of the days is written.
 */
export function coverHours(spec: RollupSpec, stream: string): string {
  const s = literal(stream);
  const own = `c."stream" = ${s} AND c."grain" = 'hourly' AND c."pcode" = $1::bigint`;
  return `WITH "before" AS (SELECT coalesce(sum(c."coverage"), 0) AS "covered" FROM ${q(COVERAGE_TABLE)} AS c
  WHERE ${own} AND c."bucket_start" >= $2::timestamptz AND c."bucket_start" < $3::timestamptz),
"h" AS (${refreshHourCoverage(stream)}
RETURNING "bucket_start", "coverage")
SELECT 1 AS "alone" FROM (SELECT bool_and(EXISTS (SELECT 1 FROM ${q(OPEN_DAYS_TABLE)} AS o WHERE o."source" = ${literal(spec.source)}
    AND o."pcode" = $1::bigint AND o."bucket_start" = d."at")
  AND ${hoursCovered(s, "$1::bigint", 'd."at"')}
    + (SELECT coalesce(sum(h."coverage"), 0) FROM "h" WHERE h."bucket_start" >= d."at" AND h."bucket_start" < d."at" + interval '1 day') < 24) AS "open"
  FROM ${touchedDays}) AS t
WHERE t."open" AND (SELECT "covered" FROM "before") = 0`;
}

/** An hourly view's coverage of its row's bucket (alias r), read by the coverage table's key; 0 where none is recorded. */
export function coverageColumn(stream: string): string {
  return `coalesce((SELECT c."coverage" FROM ${q(COVERAGE_TABLE)} AS c WHERE c."stream" = ${literal(stream)} AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start"), 0) AS "coverage"`;
}
