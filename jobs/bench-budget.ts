// The CPU budget of `npm run bench`: how busy the machine's cores were during an engine run (Linux
// /proc/stat), and what CPU a row, in all processes, a target ratio to the plain COPY leaves at that
// share of the cores. The engine, its Postgres backends and the sandbox share the cores; the plain
// COPY it is compared with runs alone. Prints nothing itself.
import { readFileSync } from "node:fs";

/** The cores' clock ticks so far (all cores together): busy, in all, and stolen (a virtual machine's host ran others on them); null off Linux. */
export function coreTicks(): { busy: number; total: number; steal: number; cores: number } | null {
  try {
    const lines = readFileSync("/proc/stat", "utf8").split("\n");
    const ticks = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - ticks[3]! - ticks[4]!, total, steal: ticks[7] ?? 0, cores: lines.filter((l) => /^cpu\d/.test(l)).length };
  } catch {
    return null;
  }
}

type Ticks = ReturnType<typeof coreTicks>;

/** The share of the cores' time between two readings (0..1) that `part` counts; null when either is missing. */
function shareOf(part: "busy" | "steal", before: Ticks, after: Ticks): number | null {
  if (!before || !after || after.total <= before.total) return null;
  return (after[part] - before[part]) / (after.total - before.total);
}

/** The share of the cores busy between two readings (0..1), stolen time included; null when either is missing. */
export const busyShare = (before: Ticks, after: Ticks) => shareOf("busy", before, after);

/**
 * The share of the cores' time the host gave to other machines between two readings: a run with
 * more of it had less machine, which no comparison with another run corrects.
 */
export const stolenShare = (before: Ticks, after: Ticks) => shareOf("steal", before, after);

/** CPU microseconds a row, in all processes, that `ratio` of `copyRowsPerSecond` allows on `cores` busy `share` of the time. */
export function allowedUsPerRow(ratio: number, copyRowsPerSecond: number, cores: number, share: number): number {
  return (cores * share * 1e6) / (ratio * copyRowsPerSecond);
}

/** CPU microseconds per row (NaN for no rows). */
export const perRow = (cpuSeconds: number, rows: number) => (rows > 0 ? (cpuSeconds * 1e6) / rows : Number.NaN);

/** A run's CPU a row in all processes, the cores' busy share, and what a ratio of `ratio` to the COPY allows at it. */
export interface Budget {
  readonly usPerRow: number;
  readonly busy: number;
  readonly allowed: number;
}

/** The parts of an engine run the budget reads (bench-engine.ts's line, with the sandbox's CPU). */
interface BudgetedRun {
  readonly rows: number;
  readonly cpuSeconds: number;
  readonly serverCpuSeconds: number | null;
  readonly sandboxCpu: number | null;
  readonly busyShare: number | null;
  readonly cores: number | null;
}

/** The budget of run `r` against the plain COPY's rate; null when a part of it could not be read. */
export function runBudget(r: BudgetedRun, copyRowsPerSecond: number, ratio = 0.5): Budget | null {
  if (r.busyShare === null || r.cores === null || r.serverCpuSeconds === null || r.sandboxCpu === null || r.rows === 0) return null;
  return {
    usPerRow: perRow(r.cpuSeconds + r.serverCpuSeconds + r.sandboxCpu, r.rows),
    busy: r.busyShare,
    allowed: allowedUsPerRow(ratio, copyRowsPerSecond, r.cores, r.busyShare),
  };
}
