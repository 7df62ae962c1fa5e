// What `npm run bench` prints: a run's line and the summary of its runs (jobs/bench.ts).
import { type Budget, perRow } from "./bench-budget.ts";
import type { GcCounts } from "./bench-gc.ts";
import type { Shape } from "./bench-shape.ts";

/** What jobs/bench-engine.ts reports of one engine run (its last line, JSON). */
export interface EngineRun {
  rows: number;
  requests: number;
  seconds: number;
  cpuSeconds: number;
  /** Of cpuSeconds, the kernel's (socket writes and reads). */
  systemSeconds: number;
  /** Of cpuSeconds, the JavaScript thread's (the rest: V8's compiler and garbage collector threads); null when unreadable. */
  mainThreadSeconds: number | null;
  /** The Postgres backends' CPU for the run (never counted as the engine's); null when unreadable. */
  serverCpuSeconds: number | null;
  rssBeforeMiB: number;
  peakRssMiB: number;
  exitCode: number;
  /** Windows of a stream in flight, as the run's configuration set it. */
  windowConcurrency: number;
  /** The run's shape (bench-shape.ts). */
  shape: Shape | null;
  /** How busy the machine's cores were during the run (0..1), and how many there are; null off Linux. */
  busyShare: number | null;
  cores: number | null;
  /** Of the cores' time, the share the host gave to other machines (steal); null off Linux. */
  stolenShare: number | null;
  /** Its garbage collections and their pauses on the main thread (bench-gc.ts). */
  gc: GcCounts;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const f = (n: number, d = 1) => n.toFixed(d);

/** One engine run's line: its rate, the CPU a row of each process, how busy the cores were, peak RSS, its shape. */
export const runLine = (label: string, r: EngineRun & { sandboxCpu: number | null }) =>
  `  ${label}: ${r.rows} rows in ${f(r.seconds)} s = ${Math.round(r.rows / r.seconds)} rows/s (engine cpu ${f(r.cpuSeconds)} s = ${f(perRow(r.cpuSeconds, r.rows))} us/row, ${f(perRow(r.systemSeconds, r.rows))} of it system, ${r.mainThreadSeconds === null ? "?" : f(perRow(r.mainThreadSeconds, r.rows))} on the main thread; server backends ${r.serverCpuSeconds === null ? "?" : f(perRow(r.serverCpuSeconds, r.rows))} us/row; sandbox cpu ${r.sandboxCpu === null ? "?" : f(r.sandboxCpu)} s; the cores ${r.busyShare === null ? "?" : Math.round(r.busyShare * 100)}% busy, ${r.stolenShare === null ? "?" : f(r.stolenShare * 100)}% stolen), peak RSS ${r.peakRssMiB} MiB (${r.rssBeforeMiB} MiB before), exit ${r.exitCode}${gcOf(r)}${shapeOf(r)}`;
/** The run's collections, as V8 paused the main thread for them. */
const gcOf = ({ gc }: EngineRun) =>
  `\n    garbage collection on the main thread: ${gc.scavenges} scavenges (${Math.round(gc.scavengeMs)} ms), ${gc.fullCollections} full (${Math.round(gc.fullMs)} ms)`;
/** When the first rows were stored, the middle rows' rate, the time after the last rows. */
const shapeOf = ({ shape: s }: EngineRun) =>
  s === null
    ? ""
    : `\n    first rows stored after ${f(s.firstRowsSeconds, 2)} s; 20-90% of the rows at ${Math.round(s.middleRowsPerSecond)} rows/s; ${f(s.tailSeconds, 2)} s after the last (the run's end: the rollups' refresh, when kept)`;

/** The bench's mode: which of its comparisons the runs made. */
export type BenchMode = "copy" | "embedded" | "rollups-cost" | "refetch";

/** What the runs measured, for the summary. */
export interface Samples {
  /** Peak RSS of each compiled engine run into Postgres, and of the warm-up run under tsx. */
  readonly rss: number[];
  readonly tsxRssMiB: number;
  /** Engine CPU us/row of each compiled run, and of it the main thread's (empty when unreadable). */
  readonly engineUs: number[];
  readonly mainUs: number[];
  /** The plain COPY's CPU us/row: this process's and its server backend's. */
  readonly copyUs: number[];
  readonly copyServerUs: number[];
  readonly embeddedUs: number[];
  readonly embeddedRss: number[];
  /** Per run: the engine's rate from 20% to 90% of its rows over the COPY's. */
  readonly middleRatios: number[];
  /** Per run: CPU a row in all, the cores' busy share, and what a ratio of 0.5 allows at it. */
  readonly budgets: Budget[];
  /** Per pair: (engine + server CPU) without rollups over with. */
  readonly cpuRatios: number[];
}

/** The summary's lines: the median of the runs' `ratios` (their meaning set by `mode`), then the medians of `s`. */
export function summaryLines(mode: BenchMode, ratios: number[], s: Samples): string[] {
  const m = median(ratios);
  const summary =
    mode === "rollups-cost"
      ? [
          `  rows/s with rollups / without, median of ${ratios.length} pairs: ${f(m, 3)} (${f((m - 1) * 100, 1)}%)`,
          `  engine + server CPU without rollups / with, median: ${s.cpuRatios.length > 0 ? f(median(s.cpuRatios), 3) : "?"}`,
        ]
      : mode === "refetch"
        ? [`  refetch / first run time, median of ${ratios.length}: ${f(m, 2)}x`]
        : mode === "embedded"
          ? [
              `  embedded / postgres time, median of ${ratios.length}: ${f(m, 2)}x`,
              `  peak RSS of the engine into the embedded database, median: ${median(s.embeddedRss)} MiB`,
              `  engine cpu per row into the embedded database (PGlite in the process), median: ${f(median(s.embeddedUs))} us/row`,
            ]
          : [
              `  ratio engine / COPY, median of ${ratios.length}: ${f(m, 3)}`,
              `  the same from 20% to 90% of the engine's rows (its start, the compiler's warm-up and the refresh at the end left out), median: ${s.middleRatios.length > 0 ? f(median(s.middleRatios), 3) : "?"}`,
              ...(s.budgets.length > 0
                ? [
                    `  cpu per row in all (engine + its backends + sandbox), median: ${f(median(s.budgets.map((b) => b.usPerRow)))} us/row, the cores ${Math.round(median(s.budgets.map((b) => b.busy)) * 100)}% busy; at that share a ratio of 0.5 allows ${f(median(s.budgets.map((b) => b.allowed)))} us/row`,
                  ]
                : []),
            ];
  summary.push(
    `  engine cpu per row (compiled), median: ${f(median(s.engineUs))} us/row${s.mainUs.length > 0 ? `, of it on the main thread ${f(median(s.mainUs))} (the rest: V8's compiler and garbage collector threads)` : ""}`,
  );
  if (s.copyUs.length > 0)
    summary.push(
      `  plain COPY cpu per row, median: client ${f(median(s.copyUs))} us/row, server backend ${s.copyServerUs.length > 0 ? f(median(s.copyServerUs)) : "?"} us/row`,
    );
  summary.push(`  peak RSS of the engine (compiled), median: ${median(s.rss)} MiB; under tsx: ${s.tsxRssMiB} MiB`);
  return summary;
}
