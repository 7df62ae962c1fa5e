// Progress of a long run: a live bar on a TTY (cli-progress), plain periodic log lines otherwise.
import cliProgress from "cli-progress";
import type { PendingCall } from "../api/pending.ts";
import type { Logger } from "../util/logger.ts";

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
  stop(): void;
}

interface Tally {
  planned: number;
  done: number;
  rows: number;
}

/**
 * Shared bookkeeping of both displays: per-stream done/planned, rows/s and ETA. After a signal
 * (`stopping`) the windows the run drops from its plan are the ones left for the next run: the
 * line says so, instead of a finished-looking `1751/1751 windows ... ETA 0s`.
 */
class Tracker {
  readonly streams = new Map<string, Tally>();
  readonly started = performance.now();
  planned = 0;
  done = 0;
  rows = 0;
  /** Of `done`, the windows that failed. */
  failed = 0;
  /** The plan is complete: before that the total may grow and no ETA is given. */
  complete = false;
  /** Windows dropped from the plan after the signal: not fetched, left for the next run. */
  left = 0;

  constructor(private readonly stopping?: AbortSignal) {}

  get stopped(): boolean {
    return this.stopping?.aborted === true;
  }

  tally(stream: string): Tally {
    const known = this.streams.get(stream);
    if (known) return known;
    const fresh = { planned: 0, done: 0, rows: 0 };
    this.streams.set(stream, fresh);
    return fresh;
  }

  plan(stream: string, windows: number): void {
    this.tally(stream).planned += windows;
    this.planned += windows;
    if (windows < 0 && this.stopped) this.left -= windows;
  }

  finish(stream: string, rows: number): void {
    const t = this.tally(stream);
    t.done += 1;
    t.rows += rows;
    this.done += 1;
    this.rows += rows;
  }

  fail(stream: string): void {
    this.finish(stream, 0);
    this.failed += 1;
  }

  /** `, 3 failed` when some did. */
  failedText(): string {
    return this.failed > 0 ? `, ${this.failed} failed` : "";
  }

  rate(): number {
    const s = (performance.now() - this.started) / 1000;
    return s > 0 ? this.rows / s : 0;
  }

  etaSeconds(): number | null {
    const s = (performance.now() - this.started) / 1000;
    if (!this.complete || this.done === 0 || s <= 0 || this.stopped) return null;
    return Math.round(((this.planned - this.done) * s) / this.done);
  }

  /** `1751/27555 windows, 3 failed`; after a signal, what was done and what is left. */
  countText(): string {
    if (!this.stopped) return `${this.done}/${this.planned} windows${this.failedText()}`;
    const inFlight = this.planned - this.done;
    const state = inFlight > 0 ? `stopping (a signal): ${inFlight} in flight, ` : "stopped by a signal: ";
    return `${state}${this.done} windows done${this.failedText()}, ${this.left} left for the next run`;
  }

  /** Streams still working, fewest done first (the ones holding the run up). */
  laggards(n: number): string {
    return [...this.streams.entries()]
      .filter(([, t]) => t.done < t.planned)
      .sort((a, b) => a[1].done / a[1].planned - b[1].done / b[1].planned)
      .slice(0, n)
      .map(([name, t]) => `${name} ${t.done}/${t.planned}`)
      .join(", ");
  }
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
      bar?.update(tracker.done, payload());
    },
    windowFailed(name) {
      tracker.fail(name);
      bar?.update(tracker.done, payload());
    },
    log(line) {
      if (bar && !stopped) multibar.log(`${line}\n`);
      else stream.write(`${line}\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar?.update(tracker.done, payload());
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
    if (tracker.planned === 0) {
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
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (tracker.planned > 0) line();
    },
  };
}

export const silentProgress: ProgressSink = { planned() {}, allPlanned() {}, windowDone() {}, windowFailed() {}, stop() {} };
