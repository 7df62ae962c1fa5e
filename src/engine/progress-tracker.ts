// The bookkeeping behind the progress displays (progress.ts): windows planned and done per stream,
// rows, rate and ETA, what a signal left, and the rollups' refresh after the windows.

interface Tally {
  planned: number;
  done: number;
  rows: number;
}

/** The rollups' refresh after the windows: days done of the days marked, and when it began. */
interface Refresh {
  done: number;
  total: number;
  readonly started: number;
}

/**
 * Shared bookkeeping of both displays: per-stream done/planned, rows/s and ETA. After a signal
 * (`stopping`) the windows the run drops from its plan are the ones left for the next run: the
 * line says so, instead of a finished-looking `1751/1751 windows ... ETA 0s`. Once the windows are
 * done, the rollups' refresh is what the run waits on: the line counts its days (and their ETA),
 * and rows/s stays the fetch's rather than falling while nothing is fetched.
 */
export class Tracker {
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
  refresh: Refresh | null = null;

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

  refreshed(done: number, total: number): void {
    if (this.refresh) Object.assign(this.refresh, { done, total });
    else this.refresh = { done, total, started: performance.now() };
  }

  rate(): number {
    const s = ((this.refresh?.started ?? performance.now()) - this.started) / 1000;
    return s > 0 ? this.rows / s : 0;
  }

  etaSeconds(): number | null {
    if (this.stopped) return null;
    const [done, total, since] = this.refresh
      ? [this.refresh.done, this.refresh.total, this.refresh.started]
      : [this.done, this.planned, this.started];
    const s = (performance.now() - since) / 1000;
    if ((!this.complete && !this.refresh) || done === 0 || s <= 0) return null;
    return Math.round(((total - done) * s) / done);
  }

  /**
   * `1751/27555 windows, 3 failed`; then `refreshing rollups: 12/330 days (27555/27555 windows)`;
   * after a signal, what was done and what is left.
   */
  countText(): string {
    const windows = `${this.done}/${this.planned} windows${this.failedText()}`;
    const r = this.refresh;
    if (!this.stopped)
      return r === null
        ? windows
        : `${r.done < r.total ? "refreshing rollups" : "rollups refreshed"}: ${r.done}/${r.total} days (${windows})`;
    const inFlight = this.planned - this.done;
    const state = inFlight > 0 ? `stopping (a signal): ${inFlight} in flight, ` : "stopped by a signal: ";
    const rollups = r !== null && r.done < r.total ? `, rollups refreshed ${r.done}/${r.total} days, the rest next run` : "";
    return `${state}${this.done} windows done${this.failedText()}, ${this.left} left for the next run${rollups}`;
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
