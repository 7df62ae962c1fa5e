// The versions of a dimension's rows (`<table>_history`), kept in the transaction that writes the
// dimension's list: after the upsert and the soft delete, the history is made to agree with what
// the table now holds in the list's scope. A row whose content differs from its current version
// (or that has none) opens a version at the capture's time; a current version whose row changed
// or went (deleted, or gone from the table) is closed at that time. Bookkeeping columns (run_id,
// synced_at, first/last seen) are no change: an unchanged list adds nothing.
//
// A list's captures are written one at a time (the stream's lock), each after the one before, but
// their times come from the clocks of the processes that made them, which may disagree (two hosts,
// a clock stepped back). So the versions of a key are ordered by the writes: a capture timed at or
// before a key's latest version counts as 1 ms after it, for that key (never a bound inverted, never
// two versions of a key at once).
import { execute, isoTime, Pipeline, type TxHandle } from "../driver/exec.ts";
import { quoteIdent, type Scope, type Statement, scopeWhere } from "../sqlText.ts";
import { type TableInfo, tableInfo } from "../tables.ts";
import { naturalKey } from "../write/naturalKey.ts";
import { historyTableName, VERSION_COLUMNS } from "./versioned.ts";

/**
 * Closes, then opens, versions of `table`'s rows in `scope` (the list's: `{ pcode }`, a parent
 * key, `{}` for the account) at `at` (the capture's time). Two statements, pipelined, in order:
 * a new version of a key may open only once its old one is closed (one current version per key).
 */
export async function recordVersions(tx: TxHandle, table: string, scope: Scope, at: number, runId: number | null): Promise<void> {
  const [info, history] = [tableInfo(table), tableInfo(historyTableName(table))];
  const sent = new Pipeline();
  sent.send(execute(tx, closeVersions(info, history, scope, at)));
  sent.send(execute(tx, openVersions(info, history, scope, at, runId)));
  await sent.settle();
}

/** The columns a version compares: the history's columns but the key, the bounds and bookkeeping. */
function compared(history: TableInfo, key: readonly string[]): string[] {
  const bounds: readonly string[] = VERSION_COLUMNS;
  return [...history.types.keys()].filter((c) => !key.includes(c) && !bounds.includes(c) && !history.bookkeeping.has(c));
}

/** `(a.x, a.y) IS NOT DISTINCT FROM (b.x, b.y)` over the compared columns (true when there are none). */
function sameContent(columns: readonly string[], a: string, b: string): string {
  if (columns.length === 0) return "true";
  const side = (alias: string) => `ROW(${columns.map((c) => `${alias}.${quoteIdent(c)}`).join(", ")})`;
  return `${side(a)} IS NOT DISTINCT FROM ${side(b)}`;
}

function sameKey(key: readonly string[], a: string, b: string): string {
  return key.map((c) => `${a}.${quoteIdent(c)} = ${b}.${quoteIdent(c)}`).join(" AND ");
}

/** At least 1 ms after `at` (a timestamptz expression): the earliest a later version may start. */
const after = (at: string) => `${at} + interval '1 millisecond'`;

/**
 * UPDATE: current versions in scope without a live row of the same content end at `at`, or 1 ms
 * after they started if that is later. $1: at.
 */
function closeVersions(table: TableInfo, history: TableInfo, scope: Scope, at: number): Statement {
  const key = naturalKey(table.name);
  const where = scopeWhere(history, scope, 2, "h");
  const live = `SELECT 1 FROM ${quoteIdent(table.name)} t WHERE ${sameKey(key, "t", "h")} AND t."deleted_at" IS NULL AND ${sameContent(compared(history, key), "t", "h")}`;
  const conditions = [...(where.sql ? [where.sql] : []), `h."valid_to" IS NULL`, `NOT EXISTS (${live})`];
  return {
    text: `UPDATE ${quoteIdent(history.name)} h SET "valid_to" = greatest($1::timestamptz, ${after(`h."valid_from"`)}) WHERE ${conditions.join(" AND ")}`,
    params: [isoTime(at), ...where.params],
  };
}

/**
 * INSERT: live rows in scope without a current version open one valid from `at`, or from the end
 * of the key's latest version if that is later (just closed above: where it ended; a version whose
 * end came before its start, written by an older release: 1 ms after its start). $1: at, $2: run id.
 */
function openVersions(table: TableInfo, history: TableInfo, scope: Scope, at: number, runId: number | null): Statement {
  const key = naturalKey(table.name);
  const columns = [...history.types.keys()].filter((c) => !(VERSION_COLUMNS as readonly string[]).includes(c));
  const where = scopeWhere(table, scope, 3, "t");
  const current = `SELECT 1 FROM ${quoteIdent(history.name)} h WHERE ${sameKey(key, "h", "t")} AND h."valid_to" IS NULL`;
  const conditions = [...(where.sql ? [where.sql] : []), `t."deleted_at" IS NULL`, `NOT EXISTS (${current})`];
  const values = columns.map((c) => (c === "run_id" ? "$2::bigint" : `t.${quoteIdent(c)}`));
  const latest = `SELECT max(greatest(p."valid_to", ${after(`p."valid_from"`)})) FROM ${quoteIdent(history.name)} p WHERE ${sameKey(key, "p", "t")}`;
  return {
    text:
      `INSERT INTO ${quoteIdent(history.name)} (${[...columns, ...VERSION_COLUMNS].map(quoteIdent).join(", ")}) ` +
      `SELECT ${values.join(", ")}, greatest($1::timestamptz, (${latest})), NULL FROM ${quoteIdent(table.name)} t WHERE ${conditions.join(" AND ")}`,
    params: [isoTime(at), runId, ...where.params],
  };
}
