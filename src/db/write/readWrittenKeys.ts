// Which of some record keys a window's write has stored already (the duplicate check of
// engine/window-rows.ts, for candidates its key hashes flagged): read inside the write's
// transaction, so it sees the batches COPYed before.

import { isoTime, type TxHandle } from "../driver/exec.ts";
import { quoteIdent, type Scope, scopeWhere } from "../sqlText.ts";
import { tableInfo } from "../tables.ts";
import type { Row } from "./row.ts";

/** A key column's value as a parameter: times as ISO text, integers as text (exact beyond 2^53). */
function param(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/**
 * The rows among `candidates` (their `key` columns) stored in `table` for one window of one
 * project and scope; null keys match null keys (IS NOT DISTINCT FROM), as the check compares.
 * `staged`: a (quoted) staging table of `table`'s columns to read instead (a verify's, engine/verify-window.ts).
 */
export async function readWrittenKeys(
  tx: TxHandle,
  table: string,
  where: { readonly pcode: number; readonly start: number; readonly end: number; readonly scope: Scope },
  key: readonly string[],
  candidates: readonly Row[],
  staged?: string,
): Promise<Row[]> {
  const info = tableInfo(table);
  const t = staged ?? quoteIdent(info.name);
  const scope = scopeWhere(info, where.scope, 4, t);
  const first = 4 + scope.params.length;
  const lists = key.map((k) => `$${first + key.indexOf(k)}::${info.types.get(k)}[]`).join(", ");
  const alias = key.map((_, i) => `c${i}`).join(", ");
  const match = key.map((k, i) => `${t}.${quoteIdent(k)} IS NOT DISTINCT FROM c.c${i}`).join(" AND ");
  const cols = key.map((k) => `${t}.${quoteIdent(k)}`).join(", ");
  const conditions = [`${t}."pcode" = $1::bigint`, `${t}."window_start" = $2::timestamptz`, `${t}."window_end" = $3::timestamptz`];
  if (scope.sql) conditions.push(scope.sql);
  const text = `SELECT DISTINCT ${cols} FROM ${t} JOIN unnest(${lists}) AS c(${alias}) ON ${match} WHERE ${conditions.join(" AND ")}`;
  const values = key.map((k) => candidates.map((row) => param(row[k])));
  const params = [where.pcode, isoTime(where.start), isoTime(where.end), ...scope.params, ...values];
  return (await tx.unsafe(text, params as never[])) as unknown as Row[];
}
