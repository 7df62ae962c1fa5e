// Keys of the live (not soft-deleted) rows of a dimension, e.g. the project codes of the account.
import type { SqlHandle } from "../driver/exec.ts";
import { quoteIdent } from "../sqlText.ts";
import { tableInfo } from "../tables.ts";

export async function readLiveKeys(sql: SqlHandle, table: string, column: string): Promise<string[]> {
  const info = tableInfo(table);
  if (!info.types.has(column)) throw new Error(`${table} has no column ${column}`);
  const live = info.hasDeletedAt ? `WHERE "deleted_at" IS NULL` : "";
  const rows = await sql.unsafe<{ k: string }[]>(
    `SELECT DISTINCT ${quoteIdent(column)}::text AS k FROM ${quoteIdent(info.name)} ${live} ORDER BY 1`,
  );
  return rows.map((r) => r.k);
}
