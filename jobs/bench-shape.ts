// The shape of a bench run (jobs/bench-engine.ts), read from the engine's progress: when its first
// rows were stored, its rate from 20% to 90% of its rows, and the seconds after its last (the run's
// end: the rollups' refresh, when they are kept). The middle rate leaves out what a run pays once (start, the compiler's
// warm-up, the end), which the whole run's rate holds.
import { type ProgressSink, silentProgress } from "../src/engine/progress.ts";

/** When the first rows were stored, rows/s from 20% to 90% of them, and the seconds of the run after the last. */
export interface Shape {
  readonly firstRowsSeconds: number;
  readonly middleRowsPerSecond: number;
  readonly tailSeconds: number;
}

/** Rows stored over the run's time, read from its progress (each window's rows once it committed). */
export class RunShape {
  readonly #at: number[] = [];
  readonly #rows: number[] = [];
  #total = 0;
  /** The run's progress: silent, but for the windows done. */
  readonly sink: ProgressSink = { ...silentProgress, windowDone: (_stream, rows) => this.#done(rows) };
  constructor(private readonly t0: number) {}

  #done(rows: number): void {
    this.#total += rows;
    this.#at.push((performance.now() - this.t0) / 1000);
    this.#rows.push(this.#total);
  }

  /** The run's shape; null when its rows did not come over a span of time (none, or all in one commit). */
  summary(seconds: number): { shape: Shape | null } {
    const n = this.#at.length;
    const reached = (share: number) => this.#rows.findIndex((r) => r >= share * this.#total);
    const [a, b] = [reached(0.2), reached(0.9)];
    const span = n === 0 ? 0 : this.#at[b]! - this.#at[a]!;
    if (span <= 0) return { shape: null };
    return {
      shape: {
        firstRowsSeconds: this.#at[0]!,
        middleRowsPerSecond: (this.#rows[b]! - this.#rows[a]!) / span,
        tailSeconds: seconds - this.#at[n - 1]!,
      },
    };
  }
}
