// The watermark of one target, computed in this one place (docs/design.md "Ledger and watermarks"):
// the end of the first unbroken run of done windows. Windows of a target are written a few at a
// time and commit in any order, so each write proposes the watermark its own leaves would allow
// (written in its transaction), the tracker learns a window only once it committed, and a last
// catch-up covers windows that committed while an earlier one was still in flight.

import type { Span } from "../windows/intervals.ts";
import { advanceWatermark, type LedgerWindow } from "../windows/plan.ts";

/** A committed (sub-)window: done, or truncated (stored what came). */
export interface CoveredLeaf extends Span {
  readonly truncated: boolean;
}

export class WatermarkTracker {
  #ledger: readonly LedgerWindow[];
  #current: number | null;

  constructor(
    ledger: readonly LedgerWindow[],
    watermark: number | null,
    private readonly startMs: number,
  ) {
    this.#ledger = ledger;
    this.#current = watermark;
  }

  /** The watermark once `leaves` of `window` commit with what has committed so far; null if it would not move. */
  propose(window: Span, leaves: readonly CoveredLeaf[]): number | null {
    return this.#moved(advanceWatermark(this.#current, this.startMs, this.#with(window, leaves)));
  }

  /** Records a window's leaves after its transaction committed (with the watermark it proposed). */
  committed(window: Span, leaves: readonly CoveredLeaf[], written: number | null): void {
    this.#ledger = this.#with(window, leaves);
    if (written !== null) this.#current = written;
  }

  /** After the last window: the watermark every committed window allows, if no write has set it yet. */
  catchUp(): number | null {
    return this.#moved(advanceWatermark(this.#current, this.startMs, this.#ledger));
  }

  #moved(next: number | null): number | null {
    return next !== null && (this.#current === null || next > this.#current) ? next : null;
  }

  /** The ledger with `window` replaced by its leaves (a re-fetch replaces its earlier sub-windows). */
  #with(window: Span, leaves: readonly CoveredLeaf[]): LedgerWindow[] {
    return [
      ...this.#ledger.filter((e) => e.start < window.start || e.end > window.end),
      ...leaves.map((l) => ({ start: l.start, end: l.end, status: l.truncated ? ("truncated" as const) : ("done" as const) })),
    ];
  }
}
