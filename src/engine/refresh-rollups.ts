// After a run's windows (or a worker's job): the rollups' marked buckets are recomputed once, for
// the whole run, instead of in each window's transaction (db/rollups/refresh.ts), a day at a time,
// shown in the progress ("refreshing rollups: N/M days"). Skipped on a stop; stopped between days
// by one, and the day in flight cancelled when the shutdown grace is over: the views are exact
// meanwhile, the marks of the days left stay, and the next run refreshes them. A refresh that
// fails (past the database step's retries) fails nothing: the run's data and ledger are committed,
// its marks stay, and the views read marked buckets from the raw rows; a warning says so. (A
// worker's job used to throw, and be run again, for it.)
// On a server database the rollups are also refreshed along the fetch (RefreshAlong): as soon as a
// day is one the run's targets have all gone past, it is refreshed while later windows are fetched,
// so that the refresh at the end is left the last day only.
import { setTimeout as sleep } from "node:timers/promises";
import { isWindowed } from "../catalogue/types.ts";
import { refreshRollups } from "../db/rollups/refresh.ts";
import { MARKS_TABLE, rollupOf } from "../db/rollups/spec.ts";
import { rollupWriter } from "../db/views.ts";
import { DAY_MS } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import { dbStep } from "./db-step.ts";
import type { EngineDeps, Target } from "./types.ts";

/** Marked hours from which the refresh is worth a line at info level (a backfill's), not debug. */
const LONG_REFRESH_HOURS = 24 * 7;

export async function refreshAfterRun(deps: EngineDeps): Promise<void> {
  if (deps.stopping?.aborted) return;
  try {
    await refresh(deps);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    deps.logger.warn(
      { error: why },
      `rollups not refreshed: ${why}. The data is stored and the views stay exact (marked buckets are read from the raw rows); the next run or scheduled tick refreshes them`,
    );
  }
}

async function refresh(deps: EngineDeps): Promise<void> {
  const t0 = performance.now();
  const sql = deps.database.sql;
  const [marked] = await dbStep(deps, "the rollups' marks", () => sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${sql(MARKS_TABLE)}`);
  const level = (marked?.n ?? 0) >= LONG_REFRESH_HOURS ? "info" : "debug";
  if (level === "info") deps.logger.info({ marked: marked!.n }, `refreshing the rollups of ${marked!.n} marked hour(s) ...`);
  const r = await dbStep(deps, "the rollups' refresh", () =>
    refreshRollups(sql, rollupWriter, {
      stopping: deps.stopping,
      hardStop: deps.hardStop,
      progress: (done, total) => deps.progress?.refreshing(done, total),
    }),
  );
  const hours = Object.values(r.hours).reduce((a, b) => a + b, 0);
  const seconds = Math.round((performance.now() - t0) / 100) / 10;
  if (r.stopped)
    deps.logger.info(
      { hours, days: r.days, totalDays: r.total, seconds },
      `rollups' refresh stopped by a signal after ${r.days}/${r.total} days (${seconds} s): the marks of the days left are kept and the views stay exact; the next run refreshes them`,
    );
  else if (hours > 0 || r.busy.length > 0)
    deps.logger[level](
      { hours, busy: r.busy, seconds },
      `rollups refreshed: ${hours} hour(s) in ${seconds} s${r.busy.length > 0 ? `; ${r.busy.join(", ")} being refreshed by another process` : ""}`,
    );
}

/** A windowed target's progress, as the refresh along the fetch sees it. */
export interface WindowTrack {
  /** Window `w` is taken from the plan (windows are taken in the order of their start). */
  taken(w: Span): void;
  /** Window `w` is written, recorded failed or left for later: this run writes none of it again. */
  settled(w: Span): void;
}

/** Where a target writing a rollup's table is: windows in flight, and the end of the last one taken. */
interface Open {
  readonly source: string;
  readonly pcode: string;
  readonly inFlight: Set<number>;
  /** Before any window is taken: -Infinity (its plan may start anywhere). */
  next: number;
}

/**
 * The rollups' refresh along a run's fetch (a server database only: the embedded one has one
 * connection, which the refresh would take from the writes). A pass starts once a day has settled,
 * that is once a target's frontier (db/rollups/refresh.ts `settledBefore`: the earliest window a
 * target of the run may still write into the rollup's table) has crossed a day's end, and at least
 * APM_REFRESH_ALONG after the pass before; it refreshes, per project, the marked days that end by
 * the frontier, one rollup at a time. A timer alone (a pass every 10 s) left a short backfill's
 * every day to the end: 0.6-0.8 s after the last rows of 7.5-9 s runs (docs/benchmarks.md). A day
 * written again later is marked again and refreshed again: the frontier only saves work, the marks
 * keep the rollups exact. Failures are the end refresh's to report: here they leave the marks for it.
 */
export class RefreshAlong {
  readonly #open = new Map<Target, Open>();
  /** Per rollup source and project, the day (index since the epoch) its frontier last reached. */
  readonly #frontierDay = new Map<string, number>();
  readonly #ended = new AbortController();
  readonly #loop: Promise<void> | null = null;
  /** A day has settled since the last pass began. */
  #due = false;
  #wake: (() => void) | null = null;

  constructor(
    private readonly deps: EngineDeps,
    targets: readonly Target[],
  ) {
    for (const target of targets) {
      const spec = rollupOf(target.stream.table);
      if (spec && isWindowed(target.stream))
        this.#open.set(target, { source: spec.source, pcode: String(target.pcode), inFlight: new Set(), next: -Infinity });
    }
    const every = deps.config.sync.refreshAlongMs;
    if (every > 0 && this.#open.size > 0 && (deps.database.sql.options?.max ?? 1) > 1) this.#loop = this.#run(every);
  }

  /** The progress of `target` (nothing to track for a table without rollups). */
  track(target: Target): WindowTrack | undefined {
    const open = this.#open.get(target);
    if (!open) return undefined;
    return {
      taken: (w) => {
        open.inFlight.add(w.start);
        open.next = Math.max(open.next, w.end);
        // Where the plan starts is no day settled: the first frontier is taken as it is.
        if (!this.#frontierDay.has(key(open))) this.#frontierDay.set(key(open), this.#dayOf(open));
      },
      settled: (w) => {
        open.inFlight.delete(w.start);
        this.#moved(open);
      },
    };
  }

  /**
   * `target` is done (written, stopped, or never run: its lock was held, its token refused): it
   * writes no more rows in this run. After the last one the refresh at the run's end takes the rest.
   */
  finished(target: Target): void {
    const open = this.#open.get(target);
    this.#open.delete(target);
    if (open && this.#open.size > 0) this.#moved(open);
  }

  /** Stops looking: a pass in flight ends after its day under way; the end refresh takes what is left. */
  async stop(): Promise<void> {
    // Aborting wakes a loop that waits for a day (its signal's listener in #run).
    this.#ended.abort();
    await this.#loop;
  }

  /** The time from which a target of this run may still write rows of `pcode` into `source`'s table. */
  #settledBefore(source: string, pcode: string): number {
    let before = Number.POSITIVE_INFINITY;
    for (const open of this.#open.values()) {
      if (open.source !== source || open.pcode !== pcode) continue;
      before = Math.min(before, open.inFlight.size > 0 ? Math.min(...open.inFlight) : open.next);
    }
    return before;
  }

  #dayOf(open: Open): number {
    return Math.floor(this.#settledBefore(open.source, open.pcode) / DAY_MS);
  }

  /** A frontier of `open`'s table and project may have moved: a pass is due when it crossed a day's end. */
  #moved(open: Open): void {
    const day = this.#dayOf(open);
    if (day <= (this.#frontierDay.get(key(open)) ?? Number.NEGATIVE_INFINITY)) return;
    this.#frontierDay.set(key(open), day);
    this.#due = true;
    this.#wake?.();
  }

  /** Resolves once a day has settled (at once if one has since the last pass), or when stopped. */
  #settledDay(signal: AbortSignal): Promise<void> {
    if (this.#due || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = () => {
        this.#wake = null;
        resolve();
      };
    });
  }

  async #run(every: number): Promise<void> {
    const { deps } = this;
    const signal = AbortSignal.any([this.#ended.signal, ...(deps.stopping ? [deps.stopping] : [])]);
    signal.addEventListener("abort", () => this.#wake?.(), { once: true });
    let last = Number.NEGATIVE_INFINITY;
    while (!signal.aborted) {
      await this.#settledDay(signal);
      const wait = last + every - performance.now();
      if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => {});
      if (signal.aborted) break;
      this.#due = false;
      last = performance.now();
      try {
        const r = await refreshRollups(deps.database.sql, rollupWriter, {
          stopping: signal,
          hardStop: deps.hardStop,
          settledBefore: (source, pcode) => this.#settledBefore(source, pcode),
          parallel: 1,
        });
        if (r.days > 0) deps.logger.debug({ days: r.days }, `rollups refreshed along the fetch: ${r.days} day(s)`);
      } catch (e) {
        deps.logger.debug(
          { error: e instanceof Error ? e.message : String(e) },
          "rollups' refresh along the fetch failed; left to the end",
        );
      }
    }
  }
}

/** A rollup source and project, as the frontiers are kept. */
const key = (open: Open) => `${open.source}/${open.pcode}`;
