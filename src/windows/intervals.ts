// Interval arithmetic on half-open [start, end) ranges, used to read the ledger as coverage:
// a grain window may be recorded whole or as split pieces (12 x 5 min, 30 + 30 min, ...),
// so the planner asks "is this range covered by done pieces" rather than "is there a row".

/** Half-open [start, end) in UTC epoch ms. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Sorted, non-overlapping, non-adjacent union of `spans` (empty spans dropped). */
export function mergeSpans(spans: Iterable<Span>): Span[] {
  const sorted = [...spans].filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

// Index of the last merged span starting at or before t (strictly before when `strict`), or -1.
function lastStartingAtOrBefore(merged: readonly Span[], t: number, strict = false): number {
  let lo = 0;
  let hi = merged.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = merged[mid]!.start;
    if (strict ? start < t : start <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The merged span containing instant `t`, if any. */
export function spanContaining(merged: readonly Span[], t: number): Span | undefined {
  const s = merged[lastStartingAtOrBefore(merged, t)];
  return s && t < s.end ? s : undefined;
}

/** True when [start, end) lies entirely inside the merged coverage. */
export function covers(merged: readonly Span[], start: number, end: number): boolean {
  if (end <= start) return true;
  const s = spanContaining(merged, start);
  return s !== undefined && s.end >= end;
}

/** True when [start, end) shares at least one instant with the merged spans. */
export function overlapsAny(merged: readonly Span[], start: number, end: number): boolean {
  if (end <= start) return false;
  const i = lastStartingAtOrBefore(merged, end, true);
  const s = merged[i];
  return s !== undefined && s.end > start;
}

/** The parts of [start, end) not covered by the merged spans, in order. */
export function uncovered(merged: readonly Span[], start: number, end: number): Span[] {
  const out: Span[] = [];
  let cursor = start;
  for (const s of merged) {
    if (cursor >= end) break;
    if (s.end <= cursor) continue;
    if (s.start >= end) break;
    if (s.start > cursor) out.push({ start: cursor, end: s.start });
    cursor = Math.max(cursor, s.end);
  }
  if (cursor < end) out.push({ start: cursor, end });
  return out;
}
