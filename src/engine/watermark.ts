// The watermark of one target, computed in this one place (docs/design.md "Ledger and watermarks"):
// the end of the first unbroken run of done windows. Windows of a target are written a few at a
// time, a few to a transaction, and commit in any order, so each write proposes the watermark its
// own windows' leaves would allow (written in its transaction), the tracker learns a window only
// once it committed, and a last catch-up covers windows that committed while an earlier one was
// still in flight.
//
// The same answer as the planner's advanceWatermark over the whole ledger, in time independent of
// the run's length: the tracker holds the done coverage as merged spans, drops those behind the
// watermark, and reads only the spans next to it. A first run of years commits a million windows.

import { type Span, spanContaining } from "../windows/intervals.ts";
import { mergeCovered } from "../windows/plan.ts";
import type { LedgerWindow } from "../windows/types.ts";

/** A committed (sub-)window: done, or truncated (stored what came). */
export interface CoveredLeaf extends Span {
  readonly truncated: boolean;
}

/** A window and the leaves its write stores. */
export interface WrittenWindow {
  readonly window: Span;
  readonly leaves: readonly CoveredLeaf[];
}

export class WatermarkTracker {
  /** The done coverage ahead of the watermark's run: merged spans, sorted. */
  #covered: Span[];
  #current: number | null;

  constructor(
    ledger: readonly LedgerWindow[],
    watermark: number | null,
    private readonly startMs: number,
  ) {
    this.#covered = mergeCovered(ledger);
    this.#current = watermark;
  }

  /**
   * The watermark once the windows of one transaction commit (each replacing what lay inside it) with
   * what has committed so far; null if it would not move. Reads the coverage held, which the windows
   * in flight bound.
   */
  propose(windows: readonly WrittenWindow[]): number | null {
    let spans = this.#covered;
    for (const { window, leaves } of windows) spans = replaced(spans, window, leaves);
    const run = spanContaining(spans, this.#from());
    return this.#moved(run ? run.end : null);
  }

  /** Records a window's leaves after its transaction committed (with the watermark it proposed). */
  committed(window: Span, leaves: readonly CoveredLeaf[], written: number | null): void {
    this.#covered = replaced(this.#covered, window, leaves);
    if (written !== null) this.#current = written;
    const from = this.#from();
    // Spans wholly behind the watermark can no longer matter: the run it stands in is kept.
    const behind = this.#covered.findIndex((s) => s.end >= from);
    if (behind > 0) this.#covered.splice(0, behind);
  }

  /** Spans of coverage held: those near the watermark, bounded by the windows in flight, not by the ledger. */
  get held(): number {
    return this.#covered.length;
  }

  /** After the last window: the watermark every committed window allows, if no write has set it yet. */
  catchUp(): number | null {
    const run = spanContaining(this.#covered, this.#from());
    return this.#moved(run ? run.end : null);
  }

  #from(): number {
    return this.#current === null ? this.startMs : Math.max(this.#current, this.startMs);
  }

  #moved(next: number | null): number | null {
    return next !== null && (this.#current === null || next > this.#current) ? next : null;
  }
}

/** Index of the first span that ends at or after `t` (a span touching t may join a run through it). */
function firstReaching(spans: readonly Span[], t: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid]!.end < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The coverage with `window` replaced by its leaves (a re-fetch replaces its earlier sub-windows). */
function replaced(spans: readonly Span[], window: Span, leaves: readonly CoveredLeaf[]): Span[] {
  const i = firstReaching(spans, window.start);
  let j = i;
  while (j < spans.length && spans[j]!.start <= window.end) j++;
  return [...spans.slice(0, i), ...mergeCovered(pieces(spans.slice(i, j), window, leaves)), ...spans.slice(j)];
}

/** Spans near a window, cut by it, with its leaves: the coverage there once the window commits. */
function pieces(near: readonly Span[], window: Span, leaves: readonly CoveredLeaf[]): LedgerWindow[] {
  const out: LedgerWindow[] = leaves.map((l) => ({ start: l.start, end: l.end, status: "done" }));
  for (const s of near) {
    if (s.start < window.start) out.push({ start: s.start, end: Math.min(s.end, window.start), status: "done" });
    if (s.end > window.end) out.push({ start: Math.max(s.start, window.end), end: s.end, status: "done" });
  }
  return out;
}
