// The refresher: one at a time per rollup (a transaction lock; a second one finds it taken and
// leaves the marks to the first), it plans the days its marks fall in, then refreshes them a day at
// a time, oldest first: takes the day's marks, recomputes its hours and the day from the raw rows,
// and stores their coverage from the ledger. The marks it takes are exactly the ones it processed
// (deleted into a temporary table first): a mark committed meanwhile stays for the next refresh,
// and until then the views compute its bucket from the raw rows. Run at the end of a run, at each
// scheduled tick, and by prune before it drops months.
// A day's statements read only that day: its bounds are parameters of unnamed statements, which
// the server plans with their values, so a month's partition is chosen when planning (and its
// index for the day) whatever statistics the tables have: a backfill's refresh takes time in
// proportion to the days it marked (a week at a time over every raw row took minutes per week
// after a year's backfill, issue 38). Between days a stop signal ends it; the shutdown grace's end
// cancels the day in flight, whose transaction rolls back with its marks kept.
import pLimit from "p-limit";
import type postgres from "postgres";
import { LOCK_KEYS } from "../driver/lockKeys.ts";
import { ensurePartitions } from "../partitions/ensurePartitions.ts";
import { partitionCache } from "../partitions/partitionCache.ts";
import { quoteLiteral as literal, quoteIdent as q } from "../sqlText.ts";
import { COVERAGE_TABLE, MARKS_TABLE, ROLLUP_GRAINS, ROLLUPS, type RollupGrain, type RollupSpec, rollupTableName } from "./spec.ts";
import { bucketColumns, bucketsFromRaw, ledgerCoverage, wholeHour } from "./sql.ts";

const TAKEN = "apm_rollup_taken";
const DAY_MS = 86_400_000;
/** SQLSTATE of a statement cancelled (pg_cancel_backend). */
const QUERY_CANCELED = "57014";

export interface RefreshOptions {
  /** Aborted at a signal: no day is started after it; the marks of the days left stay. */
  readonly stopping?: AbortSignal | undefined;
  /** Aborted when the shutdown grace is over: the days in flight are cancelled (rolled back, marks kept). */
  readonly hardStop?: AbortSignal | undefined;
  /** Told the days refreshed and the days marked (of every rollup) when planned and after each day. */
  readonly progress?: ((done: number, total: number) => void) | undefined;
  /**
   * Per rollup source and project, the time (ms) from which its rows may still be written by a run
   * under way: only the marked days that end by then are refreshed, for those projects (the rest
   * stay marked). Default: every day of every project.
   */
  readonly settledBefore?: ((source: string, pcode: string) => number) | undefined;
  /** Rollups refreshed at a time, at most (default REFRESH_PARALLEL, within the pool's size). */
  readonly parallel?: number | undefined;
}

export interface RefreshResult {
  /** Hours recomputed, per rollup source. */
  readonly hours: Readonly<Record<string, number>>;
  /** Rollups another refresher was refreshing: left to it. */
  readonly busy: readonly string[];
  /** Days refreshed, of the days marked when the refresh began (a day of each rollup counts once). */
  readonly days: number;
  readonly total: number;
  /** A signal stopped it before every marked day was refreshed: their marks stay for the next refresh. */
  readonly stopped: boolean;
}

/** A marked day of a rollup: its start, and the projects with marks in it. */
interface MarkedDay {
  readonly start: Date;
  readonly pcodes: readonly string[];
}

/**
 * Each rollup is refreshed in its own transactions, up to REFRESH_PARALLEL at a time on a pool of
 * as many connections (they share no rows: their tables, their marks and their coverage rows are
 * their own), so that the end of a run waits for the slowest rollup rather than for all of them in
 * turn. On one connection (the embedded database) they go one after the other, as before: queued
 * back to back they would also keep its WAL check (driver/embedded-wal.ts) from running between them.
 * Every rollup at once (within the pool): at 3 the others waited for a slot, and the end of an
 * 8-day bench run (its five statistics' rollups marked) refreshed in 0.6 s; at 5, 0.5 s (two
 * pairs, docs/benchmarks.md).
 */
const REFRESH_PARALLEL = ROLLUPS.length;

/** Refreshes every rollup's marked buckets; `writerOf` names the stream whose ledger covers a rollup with a coverage. */
export async function refreshRollups(
  sql: postgres.Sql,
  writerOf: (source: string) => string | null,
  opts: RefreshOptions = {},
): Promise<RefreshResult> {
  const plans: [RollupSpec, MarkedDay[]][] = [];
  for (const spec of ROLLUPS) plans.push([spec, settled(await markedDays(sql, spec), spec, opts.settledBefore)]);
  const total = plans.reduce((n, [, days]) => n + days.length, 0);
  let done = 0;
  if (total > 0) opts.progress?.(done, total);
  const dayDone = () => {
    done += 1;
    opts.progress?.(done, total);
  };
  const hours: Record<string, number> = {};
  const busy: string[] = [];
  const limit = pLimit(Math.max(1, Math.min(opts.parallel ?? REFRESH_PARALLEL, sql.options?.max ?? 1)));
  const cancel = new Canceller(sql, opts.hardStop);
  try {
    const settled = await Promise.allSettled(
      plans
        .filter(([, days]) => days.length > 0)
        .map(([spec, days]) =>
          limit(async () => {
            const r = await refreshRollup(sql, spec, writerOf(spec.source), days, { ...opts, cancel, dayDone });
            hours[spec.source] = r.hours;
            if (r.busy) busy.push(spec.source);
          }),
        ),
    );
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
  } finally {
    await cancel.dispose();
  }
  const stopped = done < total && opts.stopping?.aborted === true;
  return { hours: Object.fromEntries(ROLLUPS.map((spec) => [spec.source, hours[spec.source] ?? 0])), busy, days: done, total, stopped };
}

/** The days a rollup's marks fall in, oldest first, each with its marked projects. */
async function markedDays(sql: postgres.Sql, spec: RollupSpec): Promise<MarkedDay[]> {
  const rows = await sql<{ start: Date; pcodes: string[] }[]>`
    SELECT date_trunc('day', "hour", 'UTC') AS "start", array_agg(DISTINCT "pcode")::text[] AS "pcodes"
    FROM ${sql(MARKS_TABLE)} WHERE "source" = ${spec.source} GROUP BY 1 ORDER BY 1`;
  return rows.map((r) => ({ start: r.start, pcodes: r.pcodes }));
}

/** The marked days, each with only its projects settled by its end (`settledBefore`); days left with none go. */
function settled(days: MarkedDay[], spec: RollupSpec, settledBefore: RefreshOptions["settledBefore"]): MarkedDay[] {
  if (!settledBefore) return days;
  return days
    .map((day) => ({ ...day, pcodes: day.pcodes.filter((p) => day.start.getTime() + DAY_MS <= settledBefore(spec.source, p)) }))
    .filter((day) => day.pcodes.length > 0);
}

interface RollupRefresh extends RefreshOptions {
  readonly cancel: Canceller;
  readonly dayDone: () => void;
}

/** A rollup's marked days, one transaction each, until done, stopped, or another refresher holds the rollup. */
async function refreshRollup(
  sql: postgres.Sql,
  spec: RollupSpec,
  stream: string | null,
  days: readonly MarkedDay[],
  opts: RollupRefresh,
): Promise<{ hours: number; busy: boolean }> {
  await ensureBucketPartitions(sql, spec, days);
  let hours = 0;
  for (const day of days) {
    if (opts.stopping?.aborted) break;
    let n: number | null;
    try {
      n = await sql.begin((tx) => refreshDay(tx, spec, stream, day, opts.cancel));
    } catch (e) {
      // The day in flight when the grace ended: rolled back, its marks kept.
      if (opts.hardStop?.aborted && (e as { code?: unknown }).code === QUERY_CANCELED) break;
      throw e;
    }
    if (n === null) return { hours, busy: true };
    hours += n;
    opts.dayDone();
  }
  return { hours, busy: false };
}

/**
 * The rollup tables' partitions of the marked months, made before the refresh's transactions (as a
 * write makes its own: ensurePartitions.ts). A month whose partition a retention dropped gets it
 * back, with the refreshed buckets, until the next prune.
 */
async function ensureBucketPartitions(sql: postgres.Sql, spec: RollupSpec, days: readonly MarkedDay[]): Promise<void> {
  const months = days.map((d) => d.start.getTime());
  for (const grain of ROLLUP_GRAINS) {
    // Asked of the catalogue, not this process's cache: a prune elsewhere may have dropped a month it remembers.
    partitionCache(sql, rollupTableName(spec, grain)).forget();
    await ensurePartitions(sql, rollupTableName(spec, grain), months);
  }
}

/** One transaction: the marks of one day, refreshed; null when another refresher holds the rollup. */
async function refreshDay(
  tx: postgres.TransactionSql,
  spec: RollupSpec,
  stream: string | null,
  day: MarkedDay,
  cancel: Canceller,
): Promise<number | null> {
  const [lock] = await tx.unsafe<{ ok: boolean; pid: number }[]>(
    `SELECT pg_try_advisory_xact_lock(${LOCK_KEYS.session}) AS "ok", pg_backend_pid() AS "pid", ${HASHED}`,
    ["rollup-refresh", spec.source],
  );
  if (!lock?.ok) return null;
  const bounds = [day.start.toISOString(), new Date(day.start.getTime() + DAY_MS).toISOString()];
  return cancel.during(lock.pid, async () => {
    await tx.unsafe(`CREATE TEMP TABLE ${TAKEN} ("pcode" bigint, "at" timestamptz, "partial" boolean) ON COMMIT DROP`);
    const [taken] = await tx.unsafe<{ n: number; partial: number }[]>(takeMarks(spec), [...bounds, day.pcodes]);
    if (!taken || taken.n === 0) return 0;
    for (const [text, inDay] of recompute(spec, stream, taken.partial > 0)) await tx.unsafe(text, inDay ? bounds : []);
    return taken.n;
  });
}

/**
 * The day's buckets are grouped in a hash table, not sorted: the planner picks a sort and a group
 * for the rollups' many keys and wide rows, at any statistics, which took 55-66 ms for a day of
 * `stat_sql` (14,486 rows of 2 projects) against 32-37 ms hashed (docs/benchmarks.md). For the day's
 * transaction only (set_config's is_local); a hash table larger than the memory allowed spills to disk.
 */
const HASHED = `set_config('enable_sort', 'off', true) AS "hashed"`;

/** `column` within the day of the statement's parameters $1 and $2. */
const inDay = (column: string) => `${column} >= $1::timestamptz AND ${column} < $2::timestamptz`;

/** Moves the marks of a day ($1, $2) and its projects ($3) into a temporary table of hours; says how many, and how many partial. */
function takeMarks(spec: RollupSpec): string {
  return `WITH "gone" AS (DELETE FROM ${q(MARKS_TABLE)} AS m WHERE m."source" = ${literal(spec.source)}
    AND m."pcode" = ANY($3::bigint[]) AND ${inDay('m."hour"')}
    RETURNING m."pcode", date_trunc('hour', m."hour", 'UTC') AS "at", m."partial"),
  "kept" AS (INSERT INTO ${TAKEN} SELECT "pcode", "at", bool_or("partial") FROM "gone" GROUP BY "pcode", "at" RETURNING "partial")
SELECT count(*)::int AS "n", count(*) FILTER (WHERE "partial")::int AS "partial" FROM "kept"`;
}

/**
 * The statements recomputing the taken hours and their day (after takeMarks, in its transaction),
 * each with whether it reads the day's bounds ($1, $2). `partial`: some taken hour is partial.
 */
function recompute(spec: RollupSpec, stream: string | null, partial: boolean): [string, boolean][] {
  const buckets = (grain: RollupGrain, where = "") =>
    grain === "hourly"
      ? `(SELECT "pcode", "at" FROM ${TAKEN}${where}) AS b`
      : `(SELECT DISTINCT "pcode", date_trunc('day', "at", 'UTC') AS "at" FROM ${TAKEN}) AS b`;
  const out: [string, boolean][] = [];
  for (const grain of ROLLUP_GRAINS) {
    const table = q(rollupTableName(spec, grain));
    out.push([
      `DELETE FROM ${table} AS t USING ${buckets(grain)} WHERE t."pcode" = b."pcode" AND t."bucket_start" = b."at" AND ${inDay('t."bucket_start"')}`,
      true,
    ]);
    // A statistic's whole hours are read from its raw rows by the views: its hourly table sums the
    // others, which only the hours a split leaf (or a window off the hour) wrote can hold.
    const fromRaw = grain === "hourly" && spec.hoursFromRaw;
    const raw = [...(fromRaw ? [`NOT ${wholeHour(spec)}`] : []), inDay(`h.${q(spec.time)}`)].join(" AND ");
    if (!fromRaw || partial)
      out.push([
        `INSERT INTO ${table} (${bucketColumns(spec).map(q).join(", ")}) ${bucketsFromRaw(spec, grain, buckets(grain, fromRaw ? ` WHERE "partial"` : ""), raw)}`,
        true,
      ]);
    if (spec.coverage && stream)
      out.push([
        `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT ${literal(stream)}, b."pcode", '${grain}', b."at", ${ledgerCoverage(grain, stream, 'b."pcode"', 'b."at"')} FROM ${buckets(grain)}
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`,
        false,
      ]);
  }
  return out;
}

/**
 * Cancels the statements of the days in flight when the shutdown grace is over (`signal`), by
 * their connections' process ids, from another connection of the pool; the cancellations are
 * awaited before the refresh returns, so none reaches a connection's later statement. Not on one
 * connection (the embedded database): the statement in flight holds it, in this very process.
 */
class Canceller {
  readonly #pids = new Set<number>();
  readonly #sent: Promise<unknown>[] = [];
  readonly #armed: boolean;
  readonly #cancel = () => {
    for (const pid of this.#pids) this.#send(pid);
  };

  constructor(
    private readonly sql: postgres.Sql,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#armed = signal !== undefined && (sql.options?.max ?? 1) > 1;
    if (this.#armed) signal!.addEventListener("abort", this.#cancel, { once: true });
  }

  #send(pid: number): void {
    this.#sent.push(this.sql`SELECT pg_cancel_backend(${pid})`.catch(() => {}));
  }

  /** Runs a day's statements on connection `pid`, cancelled if the grace ends meanwhile. */
  async during<T>(pid: number, work: () => Promise<T>): Promise<T> {
    this.#pids.add(pid);
    if (this.#armed && this.signal!.aborted) this.#send(pid);
    try {
      return await work();
    } finally {
      this.#pids.delete(pid);
    }
  }

  async dispose(): Promise<void> {
    this.signal?.removeEventListener("abort", this.#cancel);
    await Promise.all(this.#sent);
  }
}
