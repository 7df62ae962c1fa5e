// Dimensions refresh fully: rows missing from a complete list are marked deleted (never removed).
import { execute, type SqlHandle } from "./exec.ts";
import { type Row, rowsToJson } from "./rowsJson.ts";
import { type Scope, softDeleteFromJson } from "./sqlText.ts";
import { type TableRef, tableInfo } from "./tables.ts";

/**
 * Sets deleted_at = now() (and run_id) on the rows of `scope` (e.g. `{ pcode }` or
 * `{ group_key }`; `{}` for the whole table) whose key is not among `presentKeys` (rows holding
 * at least the key columns not fixed by the scope). Call it only with a COMPLETE list. Rows that
 * reappear are un-marked by upsertRows. Returns rows marked.
 */
export async function softDeleteMissing(
  sql: SqlHandle,
  table: TableRef,
  scope: Scope,
  keyColumns: readonly string[],
  presentKeys: readonly Row[],
  runId: number | null,
): Promise<number> {
  const info = tableInfo(table);
  const statement = softDeleteFromJson(info, scope, keyColumns);
  // One statement with every key: an anti-join needs the whole list (dimension lists are small).
  const json = rowsToJson(info, statement.keys, presentKeys);
  return execute(sql, { text: statement.text, params: [json, runId, ...statement.params.slice(2)] });
}
