// Dimensions refresh fully: rows missing from a complete list are marked deleted (never removed).
import { execute, type TxHandle } from "../driver/exec.ts";
import { presentKeyColumns, type Scope, softDeleteFromStaged } from "../sqlText.ts";
import { type TableRef, tableInfo } from "../tables.ts";

/**
 * Sets deleted_at = now() (and run_id) on the rows of `scope` (e.g. `{ pcode }` or
 * `{ group_key }`; `{}` for the whole table) whose key is not among the rows of `staged` (the
 * staging table of the list's upsert, db/write/rowSink.ts, holding the key columns the scope does not
 * fix; null: the list was empty). Call it only with a COMPLETE list. Rows that reappear are
 * un-marked by the upsert. Returns rows marked.
 */
export async function softDeleteMissing(
  tx: TxHandle,
  table: TableRef,
  scope: Scope,
  keyColumns: readonly string[],
  staged: { readonly name: string; readonly rows: number } | null,
  runId: number | null,
): Promise<number> {
  const info = tableInfo(table);
  const keys = presentKeyColumns(info, scope, keyColumns);
  const present = staged !== null && staged.rows > 0;
  // With no key beyond the scope, the scope has one row: kept by any present row.
  if (keys.length === 0 && present) return 0;
  const statement = softDeleteFromStaged(info, scope, keyColumns, present ? staged.name : null);
  return execute(tx, { ...statement, params: [runId, ...statement.params.slice(1)] });
}
