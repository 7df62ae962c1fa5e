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
import { availableParallelism } from "node:os";
import pLimit from "p-limit";
import type postgres from "postgres";
import { DAY_MS } from "../../windows/grid.ts";
import { LIMIT_SQLSTATE } from "../driver/transient.ts";
import { ensurePartitions } from "../partitions/ensurePartitions.ts";
import { partitionCache } from "../partitions/partitionCache.ts";
import { Canceller, type MarkedDay, refreshDay } from "./refresh-day.ts";
import { MARKS_TABLE, ROLLUP_GRAINS, ROLLUPS, type RollupSpec, rollupTableName } from "./spec.ts";

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

/**
 * Each rollup is refreshed in its own transactions, up to REFRESH_PARALLEL at a time on a pool of
 * as many connections (they share no rows: their tables, their marks and their coverage rows are
 * their own), so that the end of a run waits for the slowest rollup rather than for all of them in
 * turn. On one connection (the embedded database) they go one after the other, as before: queued
 * back to back they would also keep its WAL check (driver/embedded-wal.ts) from running between them.
 * As many at once as this machine has cores (the server's are not known; on a machine that runs
 * both, they are the same): five at once on two cores spent half as much CPU again on the same days
 * as two at once, and took as long or longer (docs/benchmarks.md, eighteenth sitting).
 */
const REFRESH_PARALLEL = Math.min(ROLLUPS.length, availableParallelism());

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
      if (opts.hardStop?.aborted && (e as { code?: unknown }).code === LIMIT_SQLSTATE.QUERY_CANCELED) break;
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
