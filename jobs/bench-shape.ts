// The shape of a bench run (jobs/bench-engine.ts), read from the engine's progress: when its first
// rows were stored, its rate from 20% to 90% of its rows, and the seconds after its last (the
// rollups' refresh). The middle rate leaves out what a run pays once (start, the compiler's
// warm-up, the end), which the whole run's rate holds.
import type { ProgressSink } from "../src/engine/progress.ts";

/** Rows stored over the run's time, read from its progress (each window's rows once it committed). */
export class RunShape implements ProgressSink {
  readonly #at: number[] = [];
  readonly #rows: number[] = [];
  #total = 0;
  constructor(private readonly t0: number) {}

  planned(): void {}
  allPlanned(): void {}
  windowFailed(): void {}
  refreshing(): void {}
  stop(): void {}
  windowDone(_stream: string, rows: number): void {
    this.#total += rows;
    this.#at.push((performance.now() - this.t0) / 1000);
    this.#rows.push(this.#total);
  }

  /** When the first rows were stored, rows/s from 20% to 90% of them, and the seconds of the run after the last. */
  summary(seconds: number): { firstRowsSeconds: number | null; middleRowsPerSecond: number | null; tailSeconds: number | null } {
    const n = this.#at.length;
    if (n === 0) return { firstRowsSeconds: null, middleRowsPerSecond: null, tailSeconds: null };
    const reached = (share: number) => this.#rows.findIndex((r) => r >= share * this.#total);
    const [a, b] = [reached(0.2), reached(0.9)];
    const span = this.#at[b]! - this.#at[a]!;
    return {
      firstRowsSeconds: this.#at[0]!,
      middleRowsPerSecond: span > 0 ? (this.#rows[b]! - this.#rows[a]!) / span : null,
      tailSeconds: seconds - this.#at[n - 1]!,
    };
  }
}
