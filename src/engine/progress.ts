// Progress of a long run: a live bar on a TTY (cli-progress), plain periodic log lines otherwise.
import cliProgress from "cli-progress";
import type { PendingCall } from "../api/pending.ts";
import type { Logger } from "../util/logger.ts";
import { Tracker } from "./progress-tracker.ts";

/** Calls under way (the API client's), so that a run waiting on one answer says which. */
export type PendingSource = () => readonly PendingCall[];

/** A call is named as slow after this long. */
export const SLOW_CALL_MS = 10_000;

/** `stat.sql pcode=1 2026-03-09T14:00Z..15:00Z for 42 s`, the slowest first, at most `n`. */
export function slowCalls(pending: PendingSource | undefined, n: number, now = performance.now()): string {
  return (pending?.() ?? [])
    .filter((c) => now - c.since >= SLOW_CALL_MS)
    .sort((a, b) => a.since - b.since)
    .slice(0, n)
    .map((c) => `${c.what} for ${Math.round((now - c.since) / 1000)} s`)
    .join(", ");
}

/** What the engine reports while it works. */
export interface ProgressSink {
  /** Windows added to the plan (negative: windows the run will not fetch after all). */
  planned(stream: string, windows: number): void;
  /** Everything the run will fetch is planned: the total no longer grows, an ETA can be given. */
  allPlanned(): void;
  windowDone(stream: string, rows: number): void;
  /** A window (or snapshot) the run gave up on: settled, but shown as failed, never as done. */
  windowFailed(stream: string): void;
  /** The rollups' refresh after the windows: days refreshed of the days marked. */
  refreshing(done: number, total: number): void;
  stop(): void;
}

/** `42s`, `3m05s`, `1h02m`; `-` while there is none. */
export function formatEta(seconds: number | null): string {
  if (seconds === null) return "-";
  if (seconds < 60) return `${seconds}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** A live bar that log lines can be written above without garbling it. */
export interface TtyProgress extends ProgressSink {
  /** Writes one line above the bar (or plainly while no bar is shown). */
  log(line: string): void;
}

const BAR_OPTIONS = (stream: NodeJS.WriteStream): cliProgress.Options => ({
  stream,
  format: "{bar} {count} | {rows} rows | {rate} rows/s | {eta} | {lag}",
  hideCursor: true,
  clearOnComplete: false,
  etaBuffer: 50,
  fps: 5,
});

/** The bar's fields: windows done (and failed), rows, rate, ETA and what the run waits on. */
function barFields(tracker: Tracker, pending: PendingSource | undefined) {
  return {
    count: tracker.countText(),
    rows: tracker.rows.toLocaleString("en"),
    rate: Math.round(tracker.rate()).toLocaleString("en"),
    // Until the plan is complete the total may still grow: no ETA rather than a wrong one.
    eta: tracker.stopped ? "stopped" : `ETA ${formatEta(tracker.etaSeconds())}`,
    lag: [tracker.laggards(2), slowCalls(pending, 1)].filter(Boolean).join("; waiting on "),
  };
}

/**
 * Live bar for terminals; it appears with the first planned window, not before. Slow calls show in
 * its last field. `stopping`: the run's signal (SIGTERM/SIGINT), after which the bar says what is left.
 */
export function ttyProgress(stream: NodeJS.WriteStream = process.stderr, pending?: PendingSource, stopping?: AbortSignal): TtyProgress {
  const tracker = new Tracker(stopping);
  const multibar = new cliProgress.MultiBar(BAR_OPTIONS(stream), cliProgress.Presets.shades_classic);
  let bar: cliProgress.SingleBar | null = null;
  let stopped = false;
  const payload = () => barFields(tracker, pending);
  // Windows done, then (with the total set to the days marked) the refresh's days.
  const show = () => bar?.update(tracker.refresh?.done ?? tracker.done, payload());
  return {
    planned(name, windows) {
      tracker.plan(name, windows);
      if (stopped) return;
      if (bar) bar.setTotal(tracker.planned);
      else bar = multibar.create(tracker.planned, 0, payload());
    },
    allPlanned() {
      tracker.complete = true;
    },
    windowDone(name, rows) {
      tracker.finish(name, rows);
      show();
    },
    windowFailed(name) {
      tracker.fail(name);
      show();
    },
    refreshing(done, total) {
      tracker.refreshed(done, total);
      if (stopped) return;
      if (!bar) bar = multibar.create(total, done, payload());
      bar.setTotal(total);
      show();
    },
    log(line) {
      if (bar && !stopped) multibar.log(`${line}\n`);
      else stream.write(`${line}\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      show();
      multibar.stop();
    },
  };
}

/**
 * Periodic log lines for schedulers and pipes (no cursor tricks). Calls slower than SLOW_CALL_MS
 * are named (operation, window, seconds); before any window is planned (the clock probe, the
 * project list) the line says what the run waits on rather than 0/0.
 */
export function logProgress(logger: Logger, everyMs = 10_000, pending?: PendingSource, stopping?: AbortSignal): ProgressSink {
  const tracker = new Tracker(stopping);
  const line = () => {
    const slow = slowCalls(pending, 3);
    if (tracker.planned === 0 && tracker.refresh === null) {
      if (slow) logger.info({ waitingOn: slow }, `progress: no window planned yet; waiting on ${slow}`);
      return;
    }
    const eta = tracker.etaSeconds();
    logger.info(
      {
        windowsDone: tracker.done,
        windowsPlanned: tracker.planned,
        windowsFailed: tracker.failed,
        rows: tracker.rows,
        rowsPerSecond: Math.round(tracker.rate()),
        etaSeconds: eta,
        ...(tracker.refresh ? { refreshDaysDone: tracker.refresh.done, refreshDaysTotal: tracker.refresh.total } : {}),
        ...(tracker.stopped ? { stopped: true, windowsLeft: tracker.left } : {}),
        ...(slow ? { waitingOn: slow } : {}),
      },
      `progress: ${tracker.countText()}, ${tracker.rows} rows, ${Math.round(tracker.rate())} rows/s${eta === null ? "" : `, ETA ${eta}s`}${tracker.laggards(3) ? `; slowest: ${tracker.laggards(3)}` : ""}${slow ? `; waiting on ${slow}` : ""}`,
    );
  };
  let stopped = false;
  const timer = setInterval(line, everyMs);
  timer.unref();
  return {
    planned: (name, windows) => tracker.plan(name, windows),
    allPlanned: () => {
      tracker.complete = true;
    },
    windowDone: (name, rows) => tracker.finish(name, rows),
    windowFailed: (name) => tracker.fail(name),
    refreshing: (done, total) => tracker.refreshed(done, total),
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (tracker.planned > 0 || tracker.refresh) line();
    },
  };
}

export const silentProgress: ProgressSink = {
  planned() {},
  allPlanned() {},
  windowDone() {},
  windowFailed() {},
  refreshing() {},
  stop() {},
};
