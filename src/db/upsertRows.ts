// Dimensions and points: INSERT .. ON CONFLICT (natural key) DO UPDATE, one JSON batch per statement.
import { stageRows } from "./copyRows.ts";
import { byCopy, channelOf, execute, type SqlHandle, type WriteEncoding } from "./exec.ts";
import { chunk, type Row, rowsToJson } from "./rowsJson.ts";
import { type Scope, upsertFromJson } from "./sqlText.ts";
import { type TableRef, tableInfo } from "./tables.ts";

/**
 * Upserts `rows` by `keyColumns`. `constants` are columns shared by every row, sent once as
 * parameters (e.g. `{ pcode, series_form: "avg", oid: 0 }`); key columns may be among them.
 * Rows repeating a key within the call are collapsed to the last one (Postgres refuses to update
 * one row twice in a statement). Dimension rows get last_seen_at = now() and deleted_at cleared;
 * other tables are rewritten only when a value changed. Returns the rows inserted or updated.
 * `encoding` `copy` stages the rows in a temporary table by COPY and upserts from it in one statement.
 */
export async function upsertRows(
  sql: SqlHandle,
  table: TableRef,
  columns: readonly string[],
  keyColumns: readonly string[],
  rows: readonly Row[],
  constants: Scope = {},
  encoding: WriteEncoding = "json",
): Promise<number> {
  const info = tableInfo(table);
  const rowKey = keyColumns.filter((k) => !(k in constants));
  const unique = lastPerKey(rows, rowKey);
  if (byCopy(encoding)) {
    if (unique.length === 0) return 0;
    const staged = await stageRows(sql, info, columns, unique, channelOf(encoding));
    return execute(sql, upsertFromJson(info, columns, keyColumns, constants, staged));
  }
  const statement = upsertFromJson(info, columns, keyColumns, constants);
  let written = 0;
  for (const batch of chunk(unique)) {
    written += await execute(sql, { text: statement.text, params: [rowsToJson(info, columns, batch), ...statement.params.slice(1)] });
  }
  return written;
}

function keyOf(row: Row, keyColumns: readonly string[]): string {
  return keyColumns
    .map((k) => {
      const v = row[k];
      return v instanceof Date ? v.toISOString() : String(v);
    })
    .join("\u0000");
}

/** Keeps the last row of each key, in first-seen order. */
export function lastPerKey(rows: readonly Row[], keyColumns: readonly string[]): Row[] {
  const byKey = new Map<string, Row>();
  for (const row of rows) byKey.set(keyOf(row, keyColumns), row);
  return byKey.size === rows.length ? [...rows] : [...byKey.values()];
}
