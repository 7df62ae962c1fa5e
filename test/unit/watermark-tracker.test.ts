// The engine's watermark tracker gives the planner's answer (advanceWatermark over the whole ledger)
// whatever the order windows commit in, while holding only the coverage next to the watermark.
import { describe, expect, it } from "vitest";
import { type CoveredLeaf, WatermarkTracker } from "../../src/engine/watermark.ts";
import { mulberry32 } from "../../src/sandbox/rng.ts";
import { GRID_MS } from "../../src/windows/grid.ts";
import { advanceWatermark } from "../../src/windows/plan.ts";
import type { LedgerWindow } from "../../src/windows/types.ts";

const G = GRID_MS;

// The reference: the ledger with the window's pieces replacing what lay inside it, read whole.
function replaceIn(ledger: LedgerWindow[], w: { start: number; end: number }, leaves: readonly CoveredLeaf[]): LedgerWindow[] {
  return [
    ...ledger.filter((e) => e.start < w.start || e.end > w.end),
    ...leaves.map((l) => ({ start: l.start, end: l.end, status: l.truncated ? ("truncated" as const) : ("done" as const) })),
  ];
}

describe("WatermarkTracker", () => {
  it("agrees with advanceWatermark over random ledgers, windows, answers, commit orders and transactions of several windows", () => {
    const rand = mulberry32(42);
    for (let c = 0; c < 300; c++) {
      const int = (n: number) => Math.floor(rand() * n);
      const startMs = int(20) * G;
      // Windows of 3 cubes over [0, 90 cubes); what the ledger has lies inside them (the planner
      // widens a window over any stored one it would cut through: windows/widen.ts widenOverLedger).
      let ledger: LedgerWindow[] = Array.from({ length: int(12) }, () => {
        const s = (int(30) * 3 + int(3)) * G;
        return {
          start: s,
          end: Math.min(s + (1 + int(3)) * G, (Math.floor(s / G / 3) * 3 + 3) * G),
          status: rand() < 0.25 ? "failed" : "done",
        };
      });
      const watermark = rand() < 0.5 ? null : advanceWatermark(null, startMs, ledger);
      const tracker = new WatermarkTracker(ledger, watermark, startMs);
      let reference = watermark;
      // Committed in a random order; some answered for part, some empty.
      const windows = Array.from({ length: 30 }, (_, i) => ({ start: i * 3 * G, end: (i + 1) * 3 * G }));
      windows.sort(() => rand() - 0.5);
      // Written one to three to a transaction, as the engine's group commit does (run-windowed.ts).
      for (let k = 0; k < windows.length; ) {
        const batch = windows.slice(k, k + 1 + int(3)).map((w) => {
          const cut = rand() < 0.15 ? w.start + G : w.end;
          const leaves: CoveredLeaf[] = rand() < 0.1 ? [] : [{ start: w.start, end: cut, truncated: rand() < 0.1 }];
          return { window: w, leaves };
        });
        k += batch.length;
        const proposed = tracker.propose(batch);
        const after = batch.reduce((l, b) => replaceIn(l, b.window, b.leaves), ledger);
        const next = advanceWatermark(reference, startMs, after);
        expect(proposed).toBe(next !== null && (reference === null || next > reference) ? next : null);
        // Some writes do not carry the watermark they proposed (a catch-up writes it later).
        const written = rand() < 0.7 ? proposed : null;
        for (const b of batch) tracker.committed(b.window, b.leaves, written);
        ledger = after;
        if (written !== null) reference = written;
      }
      const last = advanceWatermark(reference, startMs, ledger);
      expect(tracker.catchUp()).toBe(last !== null && (reference === null || last > reference) ? last : null);
    }
  });

  it("holds a bounded coverage over a run of 50,000 windows, in order or four in flight (linear time)", () => {
    for (const inFlight of [1, 4]) {
      const tracker = new WatermarkTracker([], null, 0);
      let watermark: number | null = null;
      let most = 0;
      // Windows committed in blocks of `inFlight`, last first: the watermark waits for each block's first.
      for (let block = 0; block < 50_000; block += inFlight) {
        for (let i = block + inFlight - 1; i >= block; i--) {
          const w = { start: i * G, end: (i + 1) * G };
          const next = tracker.propose([{ window: w, leaves: [{ ...w, truncated: false }] }]);
          tracker.committed(w, [{ ...w, truncated: false }], next);
          if (next !== null) watermark = next;
          most = Math.max(most, tracker.held);
        }
      }
      expect(watermark).toBe(50_000 * G);
      expect(most, `in flight ${inFlight}`).toBeLessThanOrEqual(inFlight + 1);
    }
  });
});
