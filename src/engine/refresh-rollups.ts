// After a run's windows (or a worker's job): the rollups' marked buckets are recomputed once, for
// the whole run, instead of in each window's transaction (db/rollups/refresh.ts), a day at a time,
// shown in the progress ("refreshing rollups: N/M days"). Skipped on a stop; stopped between days
// by one, and the day in flight cancelled when the shutdown grace is over: the views are exact
// meanwhile, the marks of the days left stay, and the next run refreshes them. A refresh that
// fails (past the database step's retries) fails nothing: the run's data and ledger are committed,
// its marks stay, and the views read marked buckets from the raw rows; a warning says so. (A
// worker's job used to throw, and be run again, for it.)
// On a server database the rollups are also refreshed along the fetch (RefreshAlong): each day the
// run's targets have all gone past is refreshed while later windows are fetched, so that the refresh
// at the end is left the last days only.
import { setTimeout as sleep } from "node:timers/promises";
import { isWindowed } from "../catalogue/types.ts";
import { refreshRollups } from "../db/rollups/refresh.ts";
import { MARKS_TABLE, rollupOf } from "../db/rollups/spec.ts";
import { rollupWriter } from "../db/views.ts";
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
 * connection, which the refresh would take from the writes). Every APM_REFRESH_ALONG it refreshes,
 * per project, the marked days that end before the earliest window a target of the run may still
 * write into the rollup's table (db/rollups/refresh.ts `settledBefore`), one rollup at a time. A day
 * written again later is marked again and refreshed again: the frontier only saves work, the marks
 * keep the rollups exact. Failures are the end refresh's to report: here they leave the marks for it.
 */
export class RefreshAlong {
  readonly #open = new Map<Target, Open>();
  readonly #ended = new AbortController();
  readonly #loop: Promise<void> | null = null;

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
      },
      settled: (w) => open.inFlight.delete(w.start),
    };
  }

  /** `target` is done (written, stopped, or never run: its lock was held, its token refused): it writes no more rows in this run. */
  finished(target: Target): void {
    this.#open.delete(target);
  }

  /** Stops looking, after the refresh under way (a day at most per rollup is left to the end refresh). */
  async stop(): Promise<void> {
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

  async #run(every: number): Promise<void> {
    const { deps } = this;
    const signal = this.#ended.signal;
    while (!signal.aborted && !deps.stopping?.aborted) {
      await sleep(every, undefined, { signal }).catch(() => {});
      if (signal.aborted) break;
      try {
        const r = await refreshRollups(deps.database.sql, rollupWriter, {
          stopping: AbortSignal.any([signal, ...(deps.stopping ? [deps.stopping] : [])]),
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
