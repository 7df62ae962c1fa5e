// A staging table for the statements that write from a set of rows rather than straight into a
// table (upsert by natural key, soft delete of what a complete list no longer holds).
import { type Copied, copyRows, type Row } from "./copyRows.ts";
import type { TxHandle } from "./exec.ts";
import { quoteIdent } from "./sqlText.ts";
import type { TableInfo } from "./tables.ts";

let staged = 0;

/**
 * A temporary table with exactly `columns` (types of `info`), dropped at commit, filled by COPY.
 * Returns its quoted name and what the COPY wrote.
 */
export async function stageRows(
  tx: TxHandle,
  info: TableInfo,
  columns: readonly string[],
  rows: readonly Row[],
): Promise<{ name: string; copied: Copied }> {
  const name = quoteIdent(`apm_stage_${info.name}_${++staged}`);
  const defs = columns.map((c) => `${quoteIdent(c)} ${info.types.get(c)}`).join(", ");
  // Pipelined: the CREATE and the COPY leave together, in that order (exec.ts PIPELINING).
  const create = tx.unsafe(`CREATE TEMP TABLE ${name} (${defs}) ON COMMIT DROP`).execute();
  const [, copied] = await Promise.all([create, copyRows(tx, info, columns, rows, { table: name })]);
  return { name, copied };
}
