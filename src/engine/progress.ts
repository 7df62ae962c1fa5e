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
  planned(stream: string, windows: number): void;
  windowDone(stream: string, rows: number): void;
  stop(): void;
}

interface Tally {
  planned: number;
  done: number;
  rows: number;
}

/** Shared bookkeeping of both displays: per-stream done/planned, rows/s and ETA. */
class Tracker {
  readonly streams = new Map<string, Tally>();
  readonly started = Date.now();
  planned = 0;
  done = 0;
  rows = 0;

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
  }

  finish(stream: string, rows: number): void {
    const t = this.tally(stream);
    t.done += 1;
    t.rows += rows;
    this.done += 1;
    this.rows += rows;
  }

  rate(): number {
    const s = (Date.now() - this.started) / 1000;
    return s > 0 ? this.rows / s : 0;
  }

  etaSeconds(): number | null {
    const s = (Date.now() - this.started) / 1000;
    if (this.done === 0 || s <= 0) return null;
    return Math.round(((this.planned - this.done) * s) / this.done);
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

/** A live bar that log lines can be written above without garbling it. */
export interface TtyProgress extends ProgressSink {
  /** Writes one line above the bar (or plainly while no bar is shown). */
  log(line: string): void;
}

/** Live bar for terminals; it appears with the first planned window, not before. Slow calls show in its last field. */
export function ttyProgress(stream: NodeJS.WriteStream = process.stderr, pending?: PendingSource): TtyProgress {
  const tracker = new Tracker();
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      format: "{bar} {value}/{total} windows | {rows} rows | {rate} rows/s | ETA {eta_formatted} | {lag}",
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let bar: cliProgress.SingleBar | null = null;
  let stopped = false;
  const payload = () => ({
    rows: tracker.rows.toLocaleString("en"),
    rate: Math.round(tracker.rate()).toLocaleString("en"),
    lag: [tracker.laggards(2), slowCalls(pending, 1)].filter(Boolean).join("; waiting on "),
  });
  return {
    planned(name, windows) {
      tracker.plan(name, windows);
      if (stopped) return;
      if (bar) bar.setTotal(tracker.planned);
      else bar = multibar.create(tracker.planned, 0, payload());
    },
    windowDone(name, rows) {
      tracker.finish(name, rows);
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
export function logProgress(logger: Logger, everyMs = 10_000, pending?: PendingSource): ProgressSink {
  const tracker = new Tracker();
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
        rows: tracker.rows,
        rowsPerSecond: Math.round(tracker.rate()),
        etaSeconds: eta,
        ...(slow ? { waitingOn: slow } : {}),
      },
      `progress: ${tracker.done}/${tracker.planned} windows, ${tracker.rows} rows, ${Math.round(tracker.rate())} rows/s${eta === null ? "" : `, ETA ${eta}s`}${tracker.laggards(3) ? `; slowest: ${tracker.laggards(3)}` : ""}${slow ? `; waiting on ${slow}` : ""}`,
    );
  };
  let stopped = false;
  const timer = setInterval(line, everyMs);
  timer.unref();
  return {
    planned: (name, windows) => tracker.plan(name, windows),
    windowDone: (name, rows) => tracker.finish(name, rows),
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (tracker.planned > 0) line();
    },
  };
}

export const silentProgress: ProgressSink = { planned() {}, windowDone() {}, stop() {} };
