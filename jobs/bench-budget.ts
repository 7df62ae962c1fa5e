// The CPU budget of `npm run bench`: how busy the machine's cores were during an engine run (Linux
// /proc/stat), and what CPU a row, in all processes, a target ratio to the plain COPY leaves at that
// share of the cores. The engine, its Postgres backends and the sandbox share the cores; the plain
// COPY it is compared with runs alone. Prints nothing itself.
import { readFileSync } from "node:fs";

/** The cores' busy and total clock ticks so far (all cores together); null off Linux. */
export function coreTicks(): { busy: number; total: number; cores: number } | null {
  try {
    const lines = readFileSync("/proc/stat", "utf8").split("\n");
    const ticks = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - ticks[3]! - ticks[4]!, total, cores: lines.filter((l) => /^cpu\d/.test(l)).length };
  } catch {
    return null;
  }
}

/** The share of the cores busy between two readings (0..1); null when either is missing. */
export function busyShare(before: ReturnType<typeof coreTicks>, after: ReturnType<typeof coreTicks>): number | null {
  if (!before || !after || after.total <= before.total) return null;
  return (after.busy - before.busy) / (after.total - before.total);
}

/** CPU microseconds a row, in all processes, that `ratio` of `copyRowsPerSecond` allows on `cores` busy `share` of the time. */
export function allowedUsPerRow(ratio: number, copyRowsPerSecond: number, cores: number, share: number): number {
  return (cores * share * 1e6) / (ratio * copyRowsPerSecond);
}
