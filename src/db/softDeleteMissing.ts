// Dimensions refresh fully: rows missing from a complete list are marked deleted (never removed).
import type { Row } from "./copyRows.ts";
import { execute, type TxHandle } from "./exec.ts";
import { presentKeyColumns, type Scope, softDeleteFromStaged } from "./sqlText.ts";
import { stageRows } from "./stageRows.ts";
import { type TableRef, tableInfo } from "./tables.ts";

/**
 * Sets deleted_at = now() (and run_id) on the rows of `scope` (e.g. `{ pcode }` or
 * `{ group_key }`; `{}` for the whole table) whose key is not among `presentKeys` (rows holding
 * at least the key columns not fixed by the scope). Call it only with a COMPLETE list. Rows that
 * reappear are un-marked by upsertRows. Returns rows marked.
 */
export async function softDeleteMissing(
  tx: TxHandle,
  table: TableRef,
  scope: Scope,
  keyColumns: readonly string[],
  presentKeys: readonly Row[],
  runId: number | null,
): Promise<number> {
  const info = tableInfo(table);
  const keys = presentKeyColumns(info, scope, keyColumns);
  // With no key beyond the scope, the scope has one row: kept by any present row.
  if (keys.length === 0 && presentKeys.length > 0) return 0;
  // The present keys staged whole: an anti-join needs the whole list (dimension lists are small).
  const staged = presentKeys.length > 0 ? (await stageRows(tx, info, keys, presentKeys)).name : null;
  const statement = softDeleteFromStaged(info, scope, keyColumns, staged);
  return execute(tx, { ...statement, params: [runId, ...statement.params.slice(1)] });
}
