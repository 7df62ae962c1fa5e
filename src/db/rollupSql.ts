// Pure SQL of the rollups (tested as strings). A write of one project's rows over a time range is
// followed, in its transaction, by statements that keep the rollups equal to a GROUP BY of the raw
// rows: the hourly buckets of the range are computed again from the raw rows; of the daily
// buckets, only the rows of the keys those hours held before or hold now (a day of a busy service
// holds ten thousand keys, of which an hour touches a few hundred); and the share of each bucket
// the ledger covers. The same aggregates fill a warehouse's history once (migrate).

import { alignDown, alignUp, DAY_MS, HOUR_MS } from "../windows/grid.ts";
import { COVERAGE_TABLE, type RollupGrain, type RollupMeasure, type RollupSpec, rollupTableName } from "./rollups.ts";
import { quoteIdent } from "./sqlText.ts";

const q = quoteIdent;
const STEP: Readonly<Record<RollupGrain, string>> = { hourly: "hour", daily: "day" };

/** The aggregate of a measure over the raw rows of an hourly bucket. */
function rawAggregate(m: RollupMeasure): string {
  if (m.agg === "count") return "count(*)";
  const value = m.times ? `${q(m.of!)} * ${q(m.times)}` : q(m.of!);
  return `${m.agg}(${value})${m.when ? ` FILTER (WHERE ${q(m.when)} IS NOT NULL)` : ""}`;
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

/**
 * A row's day and keys as one text value: NULL keys match each other (as in the rollups' unique
 * keys, NULLS NOT DISTINCT; a NULL field prints as nothing, an empty string as ""), and one text
 * equality hashes, so a day's ten thousand rows are matched in one pass.
 */
function dayKey(spec: RollupSpec, alias: string, day: string): string {
  return `ROW(${[day, ...spec.keys.map((k) => `${alias}${q(k)}`)].join(", ")})::text`;
}
const HOUR_DAY = `date_trunc('day', h."bucket_start", 'UTC')`;

/** The days holding the hours [$2, $3). */
const DAYS_FROM = `date_trunc('day', $2::timestamptz, 'UTC')`;
const DAYS_TO = `date_trunc('day', $3::timestamptz - interval '1 microsecond', 'UTC') + interval '1 day'`;

/** The bucket rows of `grain` grouped from `from` (raw rows, or the hourly rollup), filtered by `filter`. */
function grouped(spec: RollupSpec, grain: RollupGrain, filter: string): string {
  const daily = grain === "daily";
  const from = daily ? q(rollupTableName(spec, "hourly")) : q(spec.source);
  const time = daily ? "bucket_start" : spec.time;
  const group = ["pcode", ...spec.scope].map((c) => `h.${q(c)}`);
  const keys = spec.keys.map((k) => `h.${q(k)}`);
  const select = [
    ...group,
    `date_trunc('${STEP[grain]}', h.${q(time)}, 'UTC')`,
    ...keys,
    ...spec.labels.map((c) => `max(h.${q(c)})`),
    ...Object.entries(spec.measures).map(([c, m]) => (daily ? reAggregate(c, m) : rawAggregate(m))),
  ];
  return `SELECT ${select.join(", ")} FROM ${from} AS h${filter ? ` WHERE ${filter}` : ""} GROUP BY ${[...group, `date_trunc('${STEP[grain]}', h.${q(time)}, 'UTC')`, ...keys].join(", ")}`;
}

function insertInto(spec: RollupSpec, grain: RollupGrain, rows: string): string {
  const columns = ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...Object.keys(spec.measures)];
  return `INSERT INTO ${q(rollupTableName(spec, grain))} (${columns.map(q).join(", ")}) ${rows}`;
}

/** One statement of a refresh, and the bucket grain its range ($2, $3) is on. */
export interface RefreshStatement {
  readonly text: string;
  readonly range: RollupGrain;
}

/**
 * The statements that bring the rollups of one project and scope up to date after its raw rows
 * over a range changed, in order. Parameters: pcode, the range's start and end on the grid of the
 * statement's `range`, then the scope values.
 */
export function refreshStatements(spec: RollupSpec): RefreshStatement[] {
  const hourly = q(rollupTableName(spec, "hourly"));
  const daily = q(rollupTableName(spec, "daily"));
  // The daily rows of the keys the hours of the range hold: deleted before the hours are computed
  // again (their old keys) and after (their new keys); the days' rows of those keys are then made
  // again from the hourly rows, where a day has a key's hourly rows but no daily row. Every read of
  // the daily rollup is bounded to the days of the hours.
  const keysOfHours = `SELECT DISTINCT ${dayKey(spec, "h.", HOUR_DAY)} AS "k" FROM ${hourly} AS h WHERE ${where(spec, "bucket_start", "h.")}`;
  const dropTouched = `DELETE FROM ${daily} AS d USING (${keysOfHours}) AS o
WHERE ${pinned(spec, "d.")} AND d."bucket_start" >= ${DAYS_FROM} AND d."bucket_start" < ${DAYS_TO} AND ${dayKey(spec, "d.", 'd."bucket_start"')} = o."k"`;
  const present = `SELECT ${dayKey(spec, "d.", 'd."bucket_start"')} AS "k" FROM ${daily} AS d WHERE ${where(spec, "bucket_start", "d.")}`;
  const missing = `NOT EXISTS (SELECT 1 FROM (${present}) AS x WHERE x."k" = ${dayKey(spec, "h.", HOUR_DAY)})`;
  return [
    { text: dropTouched, range: "hourly" },
    { text: `DELETE FROM ${hourly} WHERE ${where(spec, "bucket_start")}`, range: "hourly" },
    { text: insertInto(spec, "hourly", grouped(spec, "hourly", where(spec, spec.time, "h."))), range: "hourly" },
    { text: dropTouched, range: "hourly" },
    { text: insertInto(spec, "daily", grouped(spec, "daily", `${where(spec, "bucket_start", "h.")} AND ${missing}`)), range: "daily" },
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
 * ledger windows of stream `stream`. The status is tested as neither failed nor pruned, so that the
 * ledger's window key, not its status index, finds the windows.
 */
function coverageOf(grain: RollupGrain, stream: string, pcode: string, at: string): string {
  const step = `interval '1 ${STEP[grain]}'`;
  return `(SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", ${at} + ${step}) - greatest(w."window_start", ${at}))), 0)
    / extract(epoch FROM ${step})) FROM "sync_windows" AS w WHERE w."stream" = ${stream} AND w."pcode" = ${pcode} AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > ${at} - interval '${COVERAGE_LOOKBEHIND_MS / 1000} seconds'
    AND w."window_start" < ${at} + ${step} AND w."window_end" > ${at})`;
}

/**
 * The coverage of the `grain` buckets of [$3, $4) of stream $1 and project $2, computed again from
 * the ledger (which the window's transaction has just written), every bucket of the range written.
 */
export function refreshCoverage(grain: RollupGrain): string {
  const step = `interval '1 ${STEP[grain]}'`;
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT $1::text, $2::bigint, '${grain}', b."at", ${coverageOf(grain, "$1::text", "$2::bigint", 'b."at"')}
FROM generate_series($3::timestamptz, $4::timestamptz - ${step}, ${step}) AS b("at")
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`;
}

/** The INSERT that fills the coverage of every bucket of a rollup from the ledger at once (a migration). */
export function fillCoverage(spec: RollupSpec, grain: RollupGrain, stream: string): string {
  const literal = `'${stream.replaceAll("'", "''")}'`;
  return `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal}, r."pcode", '${grain}', r."bucket_start", ${coverageOf(grain, literal, 'r."pcode"', 'r."bucket_start"')}
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM ${q(rollupTableName(spec, grain))}) AS r`;
}

/** The first bucket start at or before `ms`, and the first at or after it (UTC). */
export function bucketRange(grain: RollupGrain, fromMs: number, toMs: number): { from: number; to: number } {
  const size = grain === "hourly" ? HOUR_MS : DAY_MS;
  return { from: alignDown(fromMs, size), to: alignUp(toMs, size) };
}
