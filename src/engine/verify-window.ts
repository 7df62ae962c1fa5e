// One window of `verify`: fetched again as the ledger has it done (one request, splits as the
// server makes them), its records turned into rows exactly as a write does (window-rows.ts), but
// COPYed into a temporary table inside a transaction that is rolled back; then the stored rows and
// the served ones are compared by the digest a restatement uses (db/history/restatements.ts).
// Nothing of the warehouse changes.
import type postgres from "postgres";
import { type CompareBy, digestStoredAndStaged, type WindowDigest } from "../db/history/restatements.ts";
import { quoteIdent } from "../db/sqlText.ts";
import { openRowSink } from "../db/write/rowSink.ts";
import type { Span } from "../windows/intervals.ts";
import { dbStep } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import { describeShort, disposeLeaves, emptyWindowFetch, fetchWindow, type WindowFetch } from "./fetch-window.ts";
import { serverNow } from "./server-clock.ts";
import { type EngineDeps, type Target, targetLabel } from "./types.ts";
import { writeLeaf } from "./window-rows.ts";
import { replacedColumns, replacedWindow, samePieces } from "./write-window.ts";

/** What the comparison of one window found. */
export interface WindowCheck {
  readonly target: Target;
  readonly window: Span;
  /** differ: the server's rows are not the stored ones; failed: it could not be fetched or compared. */
  readonly outcome: "agree" | "differ" | "failed";
  /** content: fetched in the pieces stored; measure: the server split it otherwise now (the measure's sum over the window). */
  readonly by: CompareBy;
  readonly stored: WindowDigest | null;
  readonly served: WindowDigest | null;
  readonly error: string | null;
  readonly requests: number;
}

/** Fetches `window` of `target` (an aggregate stream) again and compares it with the stored rows. */
export async function verifyWindow(deps: EngineDeps, target: Target, window: Span, signal?: AbortSignal): Promise<WindowCheck> {
  const fetched = emptyWindowFetch();
  const failed = (error: string): WindowCheck => ({
    target,
    window,
    outcome: "failed",
    by: "content",
    stored: null,
    served: null,
    error,
    requests: fetched.requests,
  });
  try {
    await fetchWindow(deps.client, target, window, fetched, { signal, stopWaits: deps.stopping, serverNow: () => serverNow(deps) });
    if (fetched.short) return failed(`answered for less (${describeShort(fetched.short)})`);
    const by: CompareBy = samePieces([window], fetched.leaves) ? "content" : "measure";
    if (by === "measure" && !target.stream.measure)
      return failed("the server now answers it in other pieces (the record cap splits it), and the stream has no measure to compare");
    const label = `the comparison of ${targetLabel(target)}`;
    const { stored, served } = await dbStep(deps, label, () => rolledBack(deps.database.sql, (tx) => compare(tx, target, window, fetched)));
    const same = by === "content" ? stored.digest === served.digest : stored.measure === served.measure;
    return { target, window, outcome: same ? "agree" : "differ", by, stored, served, error: null, requests: fetched.requests };
  } catch (e) {
    return failed(describeError(e));
  } finally {
    disposeLeaves(fetched);
  }
}

let staging = 0;

/** The served rows, staged as a write would store them, and the digests of both. */
async function compare(tx: postgres.TransactionSql, target: Target, window: Span, fetched: WindowFetch) {
  const replaced = replacedWindow(target, window);
  if (!replaced) throw new Error(`${target.op.id}: not an aggregate stream; only those are verified`);
  const table = quoteIdent(`apm_verify_${++staging}`);
  const constants = { pcode: replaced.pcode, ...replaced.scope };
  const sink = openRowSink(tx, replaced.info.name, replacedColumns(replaced), { kind: "stage", table, constants });
  const span = { fromMs: window.start, toMs: window.end };
  for (const leaf of fetched.leaves) await writeLeaf(tx, target, window, leaf, sink, null, span, table);
  await sink.finish();
  return digestStoredAndStaged(tx, replaced, table);
}

/** Thrown to end a transaction that must leave nothing behind. */
const ROLLBACK = Symbol("rollback");

/** Runs `fn` in a transaction that is rolled back whatever it did; returns its result. */
async function rolledBack<T>(sql: postgres.Sql, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let result: T | undefined;
  try {
    await sql.begin(async (tx) => {
      result = await fn(tx);
      throw ROLLBACK;
    });
  } catch (e) {
    if (e !== ROLLBACK) throw e;
  }
  return result as T;
}
