// Restatements: a window fetched again whose rows differ from those it replaced. Told apart by a
// digest of the window's rows (their count, and the sum of each row's 64-bit hash of its content
// columns: no text of the values, no sort), so that an unchanged answer records nothing. No
// statement is added to a window fetched the first time: the digest of what the replace deletes
// comes back from the delete itself (deleteWindowDigest), and the comparison with the rows written
// (recordRestatement) runs only when the whole window was stored before (the ledger had it done,
// an earlier answer that was empty too, or the rows deleted span it): the short last window of an
// incremental run, fetched whole by the next, is no restatement.
import { execute, type TxHandle } from "../driver/exec.ts";
import { quoteIdent, type Scope, type Statement, windowWhere } from "../sqlText.ts";
import type { TableInfo } from "../tables.ts";

/** The rows of a window as a digest: how many, the sum of the stream's measure, and a hash of their content. */
export interface WindowDigest {
  readonly rows: number;
  /** Sum of the measure column (0 over no rows); null for a stream without a measure. */
  readonly measure: number | null;
  /** null over no rows. */
  readonly digest: string | null;
  /**
   * The rows span the window: the earliest starts at its start, the latest ends at its end (false
   * over no rows). Rows of a part of it (an incremental run's short last window) answered another
   * window: not a restatement of this one.
   */
  readonly whole: boolean;
}

/** The window whose rows are digested: one replace of an aggregate (db/write/rowSink.ts). */
export interface DigestedWindow {
  readonly info: TableInfo;
  readonly pcode: number | bigint;
  readonly start: Date;
  readonly end: Date;
  readonly scope: Scope;
  /** The catalogue's `measure` of the stream (a numeric column), or null. */
  readonly measure: string | null;
}

/**
 * `SELECT rows, measure, digest, whole FROM <from> x`: the content is every column but the
 * bookkeeping ones (run_id, synced_at). $2 and $3 are the window's bounds (windowWhere's parameters).
 * The digest is `count:sum` of each row's hash_record_extended, the hash a hash join uses, by each
 * column type's own hash function: equal rows give equal sums in any order. It replaced md5 over
 * the rows' text sorted, about 1.1 ms of server time a full window against 0.45 (derived from
 * pgbench timings with and without a digest; a float's text is dear), twice a window on a refetch
 * (docs/benchmarks.md). Compared within one transaction, never stored.
 */
function digestSelect(w: DigestedWindow, from: string): string {
  const content = [...w.info.types.keys()].filter((c) => !w.info.bookkeeping.has(c));
  const row = `hash_record_extended(ROW(${content.map((c) => `x.${quoteIdent(c)}`).join(", ")}), 0)::numeric`;
  const measure = w.measure === null ? "NULL::float8" : `coalesce(sum(x.${quoteIdent(w.measure)}), 0)::float8`;
  const whole = `coalesce(min(x."window_start") = $2::timestamptz AND max(x."window_end") = $3::timestamptz, false)`;
  return (
    `SELECT count(*)::int AS "rows", ${measure} AS "measure", count(*)::text || ':' || sum(${row})::text AS "digest", ` +
    `${whole} AS "whole" FROM ${from} x`
  );
}

/**
 * The digests of the window's stored rows and of the rows of `staged` (a temporary table of the
 * same columns: what the server answers now, `verify`), by the one statement.
 */
export async function digestStoredAndStaged(
  tx: TxHandle,
  w: DigestedWindow,
  staged: string,
): Promise<{ stored: WindowDigest; served: WindowDigest }> {
  const where = windowWhere(w.info, w.pcode, w.start, w.end, w.scope);
  const stored = digestSelect(w, `(SELECT * FROM ${quoteIdent(w.info.name)} WHERE ${where.text})`);
  const text = `SELECT 1 AS "side", * FROM (${stored}) s UNION ALL SELECT 2, * FROM (${digestSelect(w, staged)}) t ORDER BY 1`;
  const [a, b] = await tx.unsafe<(WindowDigest & { side: number })[]>(text, where.params as never[]).execute();
  return { stored: withoutSide(a!), served: withoutSide(b!) };
}

function withoutSide({ side: _, ...digest }: WindowDigest & { side: number }): WindowDigest {
  return digest;
}

/** The replace's DELETE of the window's rows, answering the digest of what it deleted. */
function deleteWindowDigest(w: DigestedWindow): Statement {
  const where = windowWhere(w.info, w.pcode, w.start, w.end, w.scope);
  const gone = `DELETE FROM ${quoteIdent(w.info.name)} WHERE ${where.text} RETURNING *`;
  return { text: `WITH "gone" AS (${gone}) ${digestSelect(w, `"gone"`)}`, params: where.params };
}

/**
 * Runs deleteWindowDigest (sent at once: exec.ts PIPELINING), prepared like every statement of the
 * write path (sqlText.ts Statement): unprepared, a statement with parameters waits for the server
 * to describe them, a round trip that holds the window's pipelined COPYs behind it.
 */
export async function deleteWithDigest(tx: TxHandle, w: DigestedWindow): Promise<WindowDigest> {
  const s = deleteWindowDigest(w);
  const [row] = await tx.unsafe<WindowDigest[]>(s.text, s.params as never[], { prepare: true }).execute();
  return row!;
}

/** Where a restatement is recorded: the ledger's names for the window. */
export interface RestatedWindow {
  readonly stream: string;
  readonly partition: string;
  readonly runId: number | null;
}

/** How a window's rows now are compared with those it replaced: their content, or the measure's sum (another split). */
export type CompareBy = "content" | "measure";

/**
 * INSERT into restatements of the window's rows now against `before`, when they differ (by their
 * digests, or by the measure's sum): one row, or none when the answer was the same. Send it after
 * the window's rows are written.
 */
function restatementStatement(w: DigestedWindow, r: RestatedWindow, before: WindowDigest, by: CompareBy): Statement {
  const where = windowWhere(w.info, w.pcode, w.start, w.end, w.scope);
  const n = where.params.length;
  const p = (i: number) => `$${n + i}`;
  const now = `(${digestSelect(w, `(SELECT * FROM ${quoteIdent(w.info.name)} WHERE ${where.text})`)}) a`;
  return {
    text:
      `INSERT INTO "restatements" ("stream", "pcode", "partition", "window_start", "window_end", "rows_before", "rows_after", ` +
      `"measure", "measure_before", "measure_after", "run_id") ` +
      `SELECT ${p(1)}::text, $1::bigint, ${p(2)}::text, $2::timestamptz, $3::timestamptz, ${p(3)}::bigint, a."rows", ` +
      `${p(4)}::text, ${p(5)}::float8, a."measure", ${p(6)}::bigint FROM ${now} WHERE ` +
      (by === "content" ? `a."digest" IS DISTINCT FROM ${p(7)}::text` : `a."measure" IS DISTINCT FROM ${p(7)}::float8`),
    params: [
      ...where.params,
      r.stream,
      r.partition,
      before.rows,
      w.measure,
      before.measure,
      r.runId,
      by === "content" ? before.digest : before.measure,
    ],
  };
}

/** Runs restatementStatement; returns the restatements recorded (0 or 1). */
export function recordRestatement(
  tx: TxHandle,
  w: DigestedWindow,
  r: RestatedWindow,
  before: WindowDigest,
  by: CompareBy,
): Promise<number> {
  return execute(tx, restatementStatement(w, r, before, by));
}
