// The 5-minute grid every window lives on (docs/design.md "Windows"): the server
// aggregates 5-minute cubes and silently realigns any other boundary, which would make adjacent
// windows overlap and double count. All times are UTC epoch milliseconds.
import type { Span } from "./intervals.ts";

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** Width of the server's aggregation cube; every window boundary is a multiple of it. */
export const GRID_MS = 5 * MINUTE_MS;

// `%` keeps the sign of the dividend; epoch times before 1970 must still floor downwards.
function mod(t: number, m: number): number {
  return ((t % m) + m) % m;
}

function assertTime(t: number): void {
  if (!Number.isSafeInteger(t)) throw new RangeError(`time must be an integer epoch ms, got ${t}`);
}

/** Throws unless `grainMs` is a positive multiple of the 5-minute grid. */
export function assertGrain(grainMs: number): void {
  if (!Number.isSafeInteger(grainMs) || grainMs <= 0 || grainMs % GRID_MS !== 0) {
    throw new RangeError(`grain must be a positive multiple of 5 minutes, got ${grainMs} ms`);
  }
}

/** Start of the 5-minute cube containing `t`. */
export function floorToGrid(t: number): number {
  return alignDown(t, GRID_MS);
}

/** Smallest 5-minute boundary at or after `t`. */
export function ceilToGrid(t: number): number {
  return alignUp(t, GRID_MS);
}

/** Largest multiple of `grainMs` (counted from the UTC epoch) at or before `t`: 1 h -> whole hour, 1 d -> UTC midnight. */
export function alignDown(t: number, grainMs: number): number {
  assertTime(t);
  assertGrain(grainMs);
  return t - mod(t, grainMs);
}

/** Smallest multiple of `grainMs` (counted from the UTC epoch) at or after `t`. */
export function alignUp(t: number, grainMs: number): number {
  const down = alignDown(t, grainMs);
  return down === t ? t : down + grainMs;
}

export function isOnGrid(t: number): boolean {
  return Number.isSafeInteger(t) && mod(t, GRID_MS) === 0;
}

/** Grain windows overlapping [from, to), each ending at `cap` at the latest (the partial last window). */
export function* grainWindows(from: number, to: number, grain: number, cap: number): Generator<Span> {
  const end = Math.min(to, cap);
  for (let start = alignDown(from, grain); start < end; start += grain) {
    yield { start, end: Math.min(start + grain, cap) };
  }
}

/**
 * Halves a window on the 5-minute grid (for truncated responses): [start, mid) and [mid, end),
 * the first half getting the smaller share of an odd number of 5-minute cubes. Returns null for a
 * single 5-minute cube, which cannot be split further. Throws RangeError for an off-grid or empty window.
 */
export function splitWindow(w: Span): [Span, Span] | null {
  if (!isOnGrid(w.start) || !isOnGrid(w.end) || w.end <= w.start) {
    throw new RangeError(`cannot split [${w.start}, ${w.end}): not a non-empty window on the 5-minute grid`);
  }
  const cubes = (w.end - w.start) / GRID_MS;
  if (cubes < 2) return null;
  const mid = w.start + Math.floor(cubes / 2) * GRID_MS;
  return [
    { start: w.start, end: mid },
    { start: mid, end: w.end },
  ];
}
