// The refresher: one at a time per rollup (a transaction lock; a second one finds it taken and
// leaves the marks to the first), it takes the marks of a few days, recomputes their hours and days
// from the raw rows, and stores their coverage from the ledger. The marks it takes are exactly the
// ones it processed (deleted into a temporary table first): a mark committed meanwhile stays for the
// next refresh, and until then the views compute its bucket from the raw rows. Run at the end of a
// run, at each scheduled tick, and by prune before it drops months.
import pLimit from "p-limit";
import type postgres from "postgres";
import { LOCK_KEY_SQL } from "../driver/withAdvisoryLock.ts";
import { ensurePartitions } from "../partitions/ensurePartitions.ts";
import { partitionCache } from "../partitions/partitionCache.ts";
import { quoteLiteral as literal, quoteIdent as q } from "../sqlText.ts";
import { COVERAGE_TABLE, MARKS_TABLE, ROLLUP_GRAINS, ROLLUPS, type RollupGrain, type RollupSpec, rollupTableName } from "./spec.ts";
import { bucketColumns, bucketsFromRaw, ledgerCoverage, wholeHour } from "./sql.ts";

/** Days of marks one transaction refreshes at most (a backfill's month is refreshed a week at a time). */
const DAYS_PER_REFRESH = 7;
const TAKEN = "apm_rollup_taken";

export interface RefreshResult {
  /** Hours recomputed, per rollup source. */
  readonly hours: Readonly<Record<string, number>>;
  /** Rollups another refresher was refreshing: left to it. */
  readonly busy: readonly string[];
}

/**
 * Each rollup is refreshed in its own transactions, up to REFRESH_PARALLEL at a time on a pool of
 * as many connections (they share no rows: their tables, their marks and their coverage rows are
 * their own), so that the end of a run waits for the slowest rollup rather than for all of them in
 * turn. On one connection (the embedded database) they go one after the other, as before: queued
 * back to back they would also keep its WAL check (driver/embedded-wal.ts) from running between them.
 */
const REFRESH_PARALLEL = 3;

/** Refreshes every rollup's marked buckets; `writerOf` names the stream whose ledger covers a rollup with a coverage. */
export async function refreshRollups(sql: postgres.Sql, writerOf: (source: string) => string | null): Promise<RefreshResult> {
  const hours: Record<string, number> = {};
  const busy: string[] = [];
  const limit = pLimit(Math.max(1, Math.min(REFRESH_PARALLEL, sql.options?.max ?? 1)));
  await Promise.all(
    ROLLUPS.map((spec) =>
      limit(async () => {
        await ensureBucketPartitions(sql, spec);
        let total = 0;
        for (;;) {
          const n = await sql.begin((tx) => refreshChunk(tx, spec, writerOf(spec.source)));
          if (n === null) busy.push(spec.source);
          if (!n) break;
          total += n;
        }
        hours[spec.source] = total;
      }),
    ),
  );
  return { hours: Object.fromEntries(ROLLUPS.map((spec) => [spec.source, hours[spec.source] ?? 0])), busy };
}

/**
 * The rollup tables' partitions of the marked months, made before the refresh's transaction (as a
 * write makes its own: ensurePartitions.ts). A month whose partition a retention dropped gets it
 * back, with the refreshed buckets, until the next prune.
 */
async function ensureBucketPartitions(sql: postgres.Sql, spec: RollupSpec): Promise<void> {
  const rows = await sql<{ month: Date }[]>`
    SELECT DISTINCT date_trunc('month', "hour", 'UTC') AS "month" FROM ${sql(MARKS_TABLE)} WHERE "source" = ${spec.source}`;
  const months = rows.map((r) => r.month.getTime());
  for (const grain of ROLLUP_GRAINS) {
    // Asked of the catalogue, not this process's cache: a prune elsewhere may have dropped a month it remembers.
    partitionCache(sql, rollupTableName(spec, grain)).forget();
    await ensurePartitions(sql, rollupTableName(spec, grain), months);
  }
}

/** One transaction: the marks of up to DAYS_PER_REFRESH days, refreshed; null when another refresher holds the rollup. */
async function refreshChunk(tx: postgres.TransactionSql, spec: RollupSpec, stream: string | null): Promise<number | null> {
  const [lock] = await tx.unsafe<{ ok: boolean }[]>(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY_SQL}) AS "ok"`, [
    "rollup-refresh",
    spec.source,
  ]);
  if (!lock?.ok) return null;
  await tx.unsafe(`CREATE TEMP TABLE ${TAKEN} ("pcode" bigint, "at" timestamptz, "partial" boolean) ON COMMIT DROP`);
  const [taken] = await tx.unsafe<{ n: number }[]>(takeMarks(spec));
  if (!taken || taken.n === 0) return 0;
  for (const text of recompute(spec, stream)) await tx.unsafe(text);
  return taken.n;
}

/** Moves the marks of the oldest DAYS_PER_REFRESH days into a temporary table of hours; says how many. */
function takeMarks(spec: RollupSpec): string {
  const source = literal(spec.source);
  return `WITH "cut" AS (SELECT date_trunc('day', min("hour"), 'UTC') + interval '${DAYS_PER_REFRESH} days' AS "before"
    FROM ${q(MARKS_TABLE)} WHERE "source" = ${source}),
  "gone" AS (DELETE FROM ${q(MARKS_TABLE)} AS m USING "cut" WHERE m."source" = ${source} AND m."hour" < "cut"."before"
    RETURNING m."pcode", date_trunc('hour', m."hour", 'UTC') AS "at", m."partial"),
  "kept" AS (INSERT INTO ${TAKEN} SELECT "pcode", "at", bool_or("partial") FROM "gone" GROUP BY "pcode", "at" RETURNING 1)
SELECT count(*)::int AS "n" FROM "kept"`;
}

/** The statements recomputing the taken hours and their days (after takeMarks, in its transaction). */
function recompute(spec: RollupSpec, stream: string | null): string[] {
  const buckets = (grain: RollupGrain, where = "") =>
    grain === "hourly"
      ? `(SELECT "pcode", "at" FROM ${TAKEN}${where}) AS b`
      : `(SELECT DISTINCT "pcode", date_trunc('day', "at", 'UTC') AS "at" FROM ${TAKEN}) AS b`;
  const out: string[] = [];
  for (const grain of ROLLUP_GRAINS) {
    const table = q(rollupTableName(spec, grain));
    out.push(`DELETE FROM ${table} AS t USING ${buckets(grain)} WHERE t."pcode" = b."pcode" AND t."bucket_start" = b."at"`);
    // A statistic's whole hours are read from its raw rows by the views: its hourly table sums the
    // others, which only the hours a split leaf (or a window off the hour) wrote can hold.
    const [only, where] = grain === "hourly" && spec.hoursFromRaw ? [`NOT ${wholeHour(spec)}`, ` WHERE "partial"`] : [];
    out.push(`INSERT INTO ${table} (${bucketColumns(spec).map(q).join(", ")}) ${bucketsFromRaw(spec, grain, buckets(grain, where), only)}`);
    if (spec.coverage && stream)
      out.push(`INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, b."pcode", '${grain}', b."at", ${ledgerCoverage(grain, stream, 'b."pcode"', 'b."at"')} FROM ${buckets(grain)}
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`);
  }
  return out;
}
