// Pure SQL of the rollups (tested as strings). A write of one project's rows over a time range is
// followed, in its transaction, by statements that keep the rollups equal to a GROUP BY of the raw
// rows: the hours of the range (finer raw rows are summed into the hourly table; the statistics'
// raw rows are hourly already, so only their split windows' leaves are, and each hour's share the
// ledger covers is written), then the days holding them, unless the write can leave them as they
// are (coverHours: new hours of open days it does not complete): a day the ledger covers wholly is
// computed into the daily table; a day not wholly covered yet (the current day, a backfill under
// way) is open, and the daily views compute it when read. A day is thus written once, by the write
// that finds its last hour there or, if its last windows were in flight together, after the run's
// windows (closeDays), not once per hour.

import { alignDown, alignUp, DAY_MS, HOUR_MS } from "../windows/grid.ts";
import { coverHours, hoursCovered, STEP, TOUCHED, touchedDays } from "./coverageSql.ts";
import { COVERAGE_TABLE, OPEN_DAYS_TABLE, type RollupGrain, type RollupMeasure, type RollupSpec, rollupTableName } from "./rollups.ts";
import { quoteLiteral as literal, quoteIdent } from "./sqlText.ts";

const q = quoteIdent;
const DAYS = TOUCHED.daily;

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

/** An aggregate as its rollup column's type: sum() of a bigint is numeric. */
const typed = (aggregate: string, m: RollupMeasure) => `${aggregate}${m.type === "bigint" ? "::bigint" : ""}`;
const fromRaw = (_c: string, m: RollupMeasure) => typed(rawAggregate(m), m);
const fromHours = (c: string, m: RollupMeasure) => typed(reAggregate(c, m), m);

/**
 * The raw rows (alias h) of whole hours: a window of an hour or more that starts on the hour (all
 * but a split window's leaves). A rollup read from its raw rows (hoursFromRaw: windowed tables)
 * reads these as they are; the others are summed into its hourly table by the sync.
 */
function wholeHours(spec: RollupSpec, whole: boolean): string {
  const t = `h.${q(spec.time)}`;
  const test = `${t} = date_trunc('hour', ${t}, 'UTC') AND h."window_end" >= ${t} + interval '1 hour'`;
  return whole ? test : `NOT (${test})`;
}

/** The project ($1) and the scope values ($4...), columns of `alias`. */
function pinned(spec: RollupSpec, alias = ""): string {
  return [`${alias}${q("pcode")} = $1::bigint`, ...spec.scope.map((s, i) => `${alias}${q(s)} = $${i + 4}`)].join(" AND ");
}

/** pinned, and the range ($2, $3) on `time`. */
function where(spec: RollupSpec, time: string, alias = ""): string {
  return `${pinned(spec, alias)} AND ${alias}${q(time)} >= $2::timestamptz AND ${alias}${q(time)} < $3::timestamptz`;
}

/** Rows of `from` (alias h) grouped by project, scope, `bucket` and keys: the labels' max(), each measure by `measure`. */
function aggregated(
  spec: RollupSpec,
  from: string,
  bucket: string,
  measure: (column: string, m: RollupMeasure) => string,
  filter?: string,
): string {
  const group = ["pcode", ...spec.scope].map((c) => `h.${q(c)}`);
  const keys = spec.keys.map((k) => `h.${q(k)}`);
  const select = [
    ...group,
    bucket,
    ...keys,
    ...spec.labels.map((c) => `max(h.${q(c)})`),
    ...Object.entries(spec.measures).map(([c, m]) => measure(c, m)),
  ];
  return `SELECT ${select.join(", ")} FROM ${from}${filter ? ` WHERE ${filter}` : ""} GROUP BY ${[...group, bucket, ...keys].join(", ")}`;
}

/** The bucket rows of `grain`, filtered by `filter`: the hourly ones from the raw rows, the daily ones from the hourly rollup. */
function grouped(spec: RollupSpec, grain: RollupGrain, filter: string): string {
  const raw = grain === "hourly";
  const from = raw ? q(spec.source) : q(rollupTableName(spec, "hourly"));
  const bucket = `date_trunc('${STEP[grain]}', h.${q(raw ? spec.time : "bucket_start")}, 'UTC')`;
  return aggregated(spec, `${from} AS h`, bucket, raw ? (_c, m) => rawAggregate(m) : reAggregate, filter);
}

function insertInto(spec: RollupSpec, grain: RollupGrain, rows: string): string {
  return `INSERT INTO ${q(rollupTableName(spec, grain))} (${bucketColumns(spec).map(q).join(", ")}) ${rows}`;
}

/** The columns of a rollup row, in order. */
function bucketColumns(spec: RollupSpec): string[] {
  return ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...Object.keys(spec.measures)];
}

/** A measure over one raw row (a bucket of one row): what rawAggregate gives for it. */
function rowValue(m: RollupMeasure): string {
  if (m.agg === "count") return "1::bigint";
  return m.when ? `CASE WHEN ${q(m.when)} IS NOT NULL THEN ${rawValue(m)} END` : rawValue(m);
}

/**
 * The raw rows of whole hours (and `filter`) as hourly rollup rows, each the bucket of its start. A
 * whole hour is one window (windows of a stream and project never overlap in the raw rows), so its
 * rows need no grouping: one row per key.
 */
function wholeHourRows(spec: RollupSpec, filter?: string): string {
  const columns = [
    ...["pcode", ...spec.scope].map((c) => `h.${q(c)}`),
    `h.${q(spec.time)}`,
    ...[...spec.keys, ...spec.labels].map((c) => `h.${q(c)}`),
    ...Object.values(spec.measures).map(rowValue),
  ];
  return `SELECT ${columns.join(", ")} FROM ${q(spec.source)} AS h WHERE ${filter ? `${filter} AND ` : ""}${wholeHours(spec, true)}`;
}

/**
 * The hourly rollup of a rollup read from its raw rows (hoursFromRaw) as its views read it: the
 * hours in its table (split windows' leaves, summed by the sync; hours whose raw months prune
 * dropped), and the raw rows of whole hours, so that a filter on bucket_start is one on the raw
 * rows' window_start: it prunes months and reaches the raw key.
 */
export function hourlyRows(spec: RollupSpec): string {
  return `SELECT ${bucketColumns(spec).map(q).join(", ")} FROM ${q(rollupTableName(spec, "hourly"))}
UNION ALL
${wholeHourRows(spec)}`;
}

/**
 * The daily rows of the days `days` lists (a FROM item with a "day" column and the scope, and the
 * filter that picks them, SQL), from the raw rows of those days (hoursFromRaw) or from their hourly
 * rows: the days a window writes of a rollup without a coverage, the open days a daily view
 * computes when read (dailyRows), the open days closed (closeDays).
 */
export function daysFrom(spec: RollupSpec, days: string, filter?: string): string {
  const pins = ["pcode", ...spec.scope].map((c) => `h.${q(c)} = o.${q(c)}`);
  const [table, time, measure] = spec.hoursFromRaw
    ? [spec.source, spec.time, fromRaw]
    : [rollupTableName(spec, "hourly"), "bucket_start", fromHours];
  const joined = [...pins, `h.${q(time)} >= o."day"`, `h.${q(time)} < o."day" + interval '1 day'`].join(" AND ");
  return aggregated(spec, `${days} JOIN ${q(table)} AS h ON ${joined}`, 'o."day"', measure, filter);
}

/**
 * A daily rollup's rows as its views read them: the daily table's, and the open days' computed when
 * read (migration 0013 holds this text for each statistic).
 */
export function dailyRows(spec: RollupSpec): string {
  const open = `(SELECT o."pcode", o."bucket_start" AS "day" FROM ${q(OPEN_DAYS_TABLE)} AS o WHERE o."source" = ${literal(spec.source)}) AS o`;
  return `SELECT ${bucketColumns(spec).map(q).join(", ")} FROM ${q(rollupTableName(spec, "daily"))}
UNION ALL
${daysFrom(spec, open)}`;
}

/**
 * Writes open days into the daily table, with their coverage row, and unmarks them; returns their
 * count as "n". `before`: every project's open days before $1 (prune, before the raw partitions
 * holding them go). The others close the days of project $1 its ledger now covers wholly:
 * `touched`, those holding the hours [$2, $3) (a window's write, taking its turn: reopenDays first);
 * `complete`, all of them (after a run's windows, for a day whose last windows were in flight
 * together and each left it open: coverHours).
 */
export function closeDays(spec: RollupSpec, stream: string, which: "before" | "touched" | "complete"): string {
  const s = literal(stream);
  const covered = `d."pcode" = $1::bigint AND ${hoursCovered(s, 'd."pcode"', 'd."bucket_start"')} >= 24`;
  const at = {
    before: `d."bucket_start" < $1::timestamptz`,
    touched: `d."bucket_start" >= ${DAYS.from} AND d."bucket_start" < ${DAYS.to} AND ${covered}`,
    complete: covered,
  }[which];
  return `WITH "closed" AS (DELETE FROM ${q(OPEN_DAYS_TABLE)} AS d WHERE d."source" = ${literal(spec.source)} AND ${at}
  RETURNING d."pcode", d."bucket_start" AS "day"),
"written" AS (${insertInto(spec, "daily", daysFrom(spec, `"closed" AS o`))}),
"covered" AS (INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
  SELECT ${s}, o."pcode", 'daily', o."day", ${hoursCovered(s, 'o."pcode"', 'o."day"')} / 24 FROM "closed" AS o
  ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage")
SELECT count(*)::int AS "n" FROM "closed"`;
}

/**
 * Opens the days holding the hours [$2, $3) of project $1 (a window's write, taking its turn): their
 * rows leave the daily table and their coverage rows go, and they are marked open; closeDays
 * (`touched`) then closes again those the ledger covers wholly, from their raw rows.
 */
function reopenDays(spec: RollupSpec, stream: string): string {
  const days = `"bucket_start" >= ${DAYS.from} AND "bucket_start" < ${DAYS.to}`;
  return `WITH "gone" AS (DELETE FROM ${q(rollupTableName(spec, "daily"))} WHERE ${pinned(spec)} AND ${days}),
"uncovered" AS (DELETE FROM ${q(COVERAGE_TABLE)} WHERE "stream" = ${literal(stream)} AND "grain" = 'daily' AND "pcode" = $1::bigint AND ${days})
INSERT INTO ${q(OPEN_DAYS_TABLE)} ("source", "pcode", "bucket_start") SELECT ${literal(spec.source)}, $1::bigint, d."at" FROM ${touchedDays}
ON CONFLICT DO NOTHING`;
}

/**
 * Writes into the hourly table the whole hours of the raw rows in [$2, $1) ($2 null: all before $1;
 * prune, before their raw partitions go, for a rollup read from them: hoursFromRaw; the table holds
 * their other hours).
 */
export function keepHours(spec: RollupSpec): string {
  const t = `h.${q(spec.time)}`;
  return insertInto(spec, "hourly", wholeHourRows(spec, `${t} >= coalesce($2::timestamptz, '-infinity') AND ${t} < $1::timestamptz`));
}

/** The days holding the hours [$2, $3) of project $1 and the scope values, as o("pcode", scope..., "day"). */
function touchedDaysOf(spec: RollupSpec): string {
  const pin = spec.scope.map((s, i) => `, $${i + 4}::text AS ${q(s)}`).join("");
  return `(SELECT $1::bigint AS "pcode"${pin}, d."at" AS "day" FROM ${touchedDays}) AS o`;
}

export interface RefreshStatements {
  readonly deleteHours: string;
  readonly insertHours: string;
  /** A rollup with a coverage: its hours' coverage, and whether the days may be left as they are. */
  readonly coverHours: string | null;
  readonly days: readonly string[];
}

/**
 * The statements that bring the rollups of one project and scope up to date after its raw rows
 * over a range changed, in order; `stream` is the one whose ledger the coverage reads. Parameters:
 * pcode, the range's start and end on the hourly grid, then the scope values. The hourly table's
 * hours of the range computed again from the raw rows (for a rollup read from its raw rows, only
 * from those that are not whole hours: split windows' leaves), then the hours' coverage (whose row
 * says whether the days may be left as they are: coverHours). `days`: the days the range touches
 * are opened and those the ledger covers wholly closed again (a rollup with a coverage), or lose
 * their rows and get them back (one without).
 */
export function refreshStatements(spec: RollupSpec, stream: string): RefreshStatements {
  return {
    deleteHours: `DELETE FROM ${q(rollupTableName(spec, "hourly"))} WHERE ${where(spec, "bucket_start")}`,
    insertHours: insertInto(
      spec,
      "hourly",
      grouped(spec, "hourly", `${where(spec, spec.time, "h.")}${spec.hoursFromRaw ? ` AND ${wholeHours(spec, false)}` : ""}`),
    ),
    coverHours: spec.coverage ? coverHours(spec, stream) : null,
    // Without a coverage, each day is complete: computed again from its hourly rows.
    days: spec.coverage
      ? [reopenDays(spec, stream), closeDays(spec, stream, "touched")]
      : [
          `DELETE FROM ${q(rollupTableName(spec, "daily"))} WHERE ${pinned(spec)} AND "bucket_start" >= ${DAYS.from} AND "bucket_start" < ${DAYS.to}`,
          insertInto(spec, "daily", daysFrom(spec, touchedDaysOf(spec))),
        ],
  };
}

/** The INSERT that filled a rollup from the whole history at once (migration 0007): hourly from the raw rows, daily from the hourly. */
export function fillBuckets(spec: RollupSpec, grain: RollupGrain): string {
  return insertInto(spec, grain, grouped(spec, grain, ""));
}

/** The first bucket start at or before `ms`, and the first at or after it (UTC). */
export function bucketRange(grain: RollupGrain, fromMs: number, toMs: number): { from: number; to: number } {
  const size = grain === "hourly" ? HOUR_MS : DAY_MS;
  return { from: alignDown(fromMs, size), to: alignUp(toMs, size) };
}
