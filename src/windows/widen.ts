// A grain change never double counts: planned windows widened over the stored windows they would
// cut through (the planner's last step, for syncs and backfills alike).
import { grainWindows } from "./grid.ts";
import type { Span } from "./intervals.ts";
import type { LedgerWindow, Window } from "./types.ts";

/**
 * Stored windows chained by overlap, sorted: each a span no window may cut through. Windows of
 * one grain only touch, so each is one ledger window; after a grain change, an hour stored whole
 * and its two half hours fetched later are one.
 */
function overlapClusters(ledger: readonly LedgerWindow[]): Span[] {
  const sorted = ledger.filter((w) => w.end > w.start).sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const w of sorted) {
    const last = out[out.length - 1];
    if (last && w.start < last.end) last.end = Math.max(last.end, w.end);
    else out.push({ start: w.start, end: w.end });
  }
  return out;
}

/**
 * A grain change never double counts: a planned window that cuts through a stored window (of
 * another grain, or a failed one) is widened to the whole stored window, fetched as its grain
 * pieces (`parts`) and written in one transaction, so the replace deletes every stored row and
 * ledger window it overlaps, and compares (restatements) the same range before and after. Later
 * windows inside a widened one are dropped; one reaching into it starts where it ends, if what is
 * left of it is still `needed`.
 */
export function* widenOverLedger(
  windows: Iterable<Window>,
  ledger: readonly LedgerWindow[],
  grain: number,
  needed: (w: Window) => boolean,
): Generator<Window> {
  const stored = overlapClusters(ledger);
  let j = 0;
  let reached = Number.NEGATIVE_INFINITY;
  for (const w of windows) {
    if (w.end <= reached || (w.start < reached && !needed({ ...w, start: reached }))) continue;
    let start = Math.max(w.start, reached);
    let end = w.end;
    while (j < stored.length && stored[j]!.end <= start) j++;
    for (let k = j; k < stored.length && stored[k]!.start < end; k++) {
      start = Math.min(start, stored[k]!.start);
      end = Math.max(end, stored[k]!.end);
    }
    reached = end;
    if (start === w.start && end === w.end) yield w;
    else yield { start, end, reason: w.reason, parts: piecesOf(start, end, grain) };
  }
}

/** The grain windows of [start, end), the first and last cut to it. */
function piecesOf(start: number, end: number, grain: number): Span[] {
  return [...grainWindows(start, end, grain, end)].map((p) => ({ start: Math.max(p.start, start), end: p.end }));
}
