// A window's rows encoded as soon as its answers are in, before its transaction: the write's CPU
// work (the fast lane, the rows, the checks, the COPY encoding) done while the parsed records are
// young, and only the encoded bytes held until the transaction. Parsed records that waited tens of
// milliseconds for their window's transaction were copied by the collector, most of them twice:
// encoded early, a run's engine took 6-8% less CPU in alternated pairs (docs/benchmarks.md,
// twentieth sitting).
// Only where the write needs nothing of the transaction: an aggregate's replace whose answers were
// parsed whole, with no record refused and no key met twice in a leaf. Any other window is written
// in its transaction as before (window-rows.ts writeLeaf), its answers untouched.
import type { TxHandle } from "../db/driver/exec.ts";
import { encodingSink } from "../db/write/rowSink.ts";
import type { Span } from "../windows/intervals.ts";
import type { WindowFetch } from "./fetch-window.ts";
import type { Target } from "./types.ts";
import { type EarlyRows, type LeafTally, writeLeaves } from "./window-rows.ts";
import { replacedColumns, replacedWindow } from "./write-window.ts";

/** A write that needs its transaction: the window is written there instead. */
class NeedsTransaction extends Error {}

const needsTransaction = (): never => {
  throw new NeedsTransaction("written in the transaction");
};

/** A transaction handle that any statement gives back to the transaction (a quarantine, a read of rows written). */
const NO_TRANSACTION = new Proxy(needsTransaction, { get: needsTransaction, apply: needsTransaction }) as unknown as TxHandle;

/**
 * The rows of `fetched` (window `window` of `target`) encoded now, its parsed answers let go of;
 * null, nothing changed, where the write needs its transaction.
 */
export async function encodeEarly(target: Target, window: Span, fetched: WindowFetch, runId: number | null): Promise<EarlyRows | null> {
  const replaced = replacedWindow(target, window);
  if (replaced === null || !fetched.leaves.every((leaf) => leaf.page.records.parsed)) return null;
  const { pcode, start, end, scope } = replaced;
  const { early, sink } = encodingSink(
    replaced.info,
    replacedColumns(replaced),
    { kind: "replace", pcode, start, end, scope },
    needsTransaction,
  );
  const span = { fromMs: window.start, toMs: window.end };
  let tallies: LeafTally[];
  try {
    tallies = await writeLeaves(NO_TRANSACTION, target, window, fetched.leaves, sink, runId, span);
  } catch (e) {
    if (e instanceof NeedsTransaction) return null;
    throw e;
  }
  // The encoded rows stay charged on the memory budget in place of the parsed records until the
  // window's leaves are disposed of, each page keeping its share. Rows that take more than the
  // records were charged are dropped: their window is written from its records, in its transaction.
  const charged = fetched.leaves.reduce((n, leaf) => n + leaf.page.records.charged, 0);
  if (early.bytes > charged) return null;
  for (const { page } of fetched.leaves)
    page.records.letGo(Math.min(page.records.charged, Math.ceil((early.bytes * page.records.charged) / Math.max(1, charged))));
  return { rows: early, tallies, span };
}
