// Pure SQL of the rollups' coverage (tested as strings): the share of an hourly or daily bucket of
// one project that the ledger of the stream writing it covers (done or truncated windows), kept in
// rollup_coverage by the window's transaction and read by the statistics' views.

import { DAY_MS } from "../windows/grid.ts";
import type { RollupGrain, RollupSpec } from "./rollups.ts";
import { COVERAGE_TABLE, rollupTableName } from "./rollups.ts";
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
 * The coverage of the `grain` buckets a write of the hours [$2, $3) of project $1 touches,
 * computed again from the ledger of `stream` (which the window's transaction has just written).
 */
export function refreshCoverage(stream: string, grain: RollupGrain): string {
  const { from, to } = TOUCHED[grain];
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, $1::bigint, '${grain}', c."at", c."coverage" FROM (${bucketsCovered(grain, literal(stream), "$1::bigint", from, to)}) AS c
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`;
}

/** The INSERT that filled the coverage of every bucket of a rollup from the ledger at once (migration 0007). */
export function fillCoverage(spec: RollupSpec, grain: RollupGrain, stream: string): string {
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, r."pcode", '${grain}', r."bucket_start", ${coverageOf(grain, literal(stream), 'r."pcode"', 'r."bucket_start"')}
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM ${q(rollupTableName(spec, grain))}) AS r`;
}

/** A view's coverage of its row's bucket (alias r), read by the coverage table's key; 0 where none is recorded. */
export function coverageColumn(stream: string, grain: RollupGrain): string {
  return `coalesce((SELECT c."coverage" FROM ${q(COVERAGE_TABLE)} AS c WHERE c."stream" = ${literal(stream)} AND c."grain" = '${grain}'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start"), 0) AS "coverage"`;
}
