// Dimensions and points: INSERT .. ON CONFLICT (natural key) DO UPDATE from rows staged by COPY.
import type { Row } from "./copyRows.ts";
import { execute, type TxHandle } from "./exec.ts";
import { deleteMovedFromStaged, type Scope, upsertFromStaged } from "./sqlText.ts";
import { stageRows } from "./stageRows.ts";
import { type TableRef, tableInfo } from "./tables.ts";

export interface UpsertResult {
  /** Rows inserted or updated. */
  readonly written: number;
  /** Values written with U+FFFD for text the database cannot hold (cleanText.ts). */
  readonly replaced: number;
}

/**
 * Upserts `rows` by `keyColumns`: the rows are staged in a temporary table by COPY and upserted
 * from it in one statement. `constants` are columns shared by every row, sent once as parameters
 * (e.g. `{ pcode, series_form: "avg", oid: 0 }`); key columns may be among them. Rows repeating a
 * key within the call are collapsed to the last one (Postgres refuses to update one row twice in
 * a statement). Dimension rows get last_seen_at = now() and deleted_at cleared; other tables are
 * rewritten only when a value changed. A table whose rows may move in time (events) first loses the
 * stored row of each key that now arrives with another time. `rows` are encoded before the promise is returned (copyRows).
 */
export async function upsertRows(
  tx: TxHandle,
  table: TableRef,
  columns: readonly string[],
  keyColumns: readonly string[],
  rows: readonly Row[],
  constants: Scope = {},
): Promise<UpsertResult> {
  const info = tableInfo(table);
  // A movable row (an event) is one row whatever its time: the last one read wins.
  const identity = info.movable ? keyColumns.filter((k) => k !== info.partitionColumn) : keyColumns;
  const unique = lastPerKey(
    rows,
    identity.filter((k) => !(k in constants)),
  );
  if (unique.length === 0) return { written: 0, replaced: 0 };
  const staged = await stageRows(tx, info, columns, unique);
  // Pipelined, in this order (exec.ts PIPELINING): the row at its old time goes, then the upsert.
  const moved = info.movable ? execute(tx, deleteMovedFromStaged(info, keyColumns, constants, staged.name, unique)) : 0;
  const [, written] = await Promise.all([moved, execute(tx, upsertFromStaged(info, columns, keyColumns, constants, staged.name))]);
  return { written, replaced: staged.copied.replaced };
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
