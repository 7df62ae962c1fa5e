// One ledger row written as a window's transaction writes it (db/ledger/windowStatements.ts recordWindows),
// for tests that set up a ledger by hand; returns the row's id.
import type postgres from "postgres";
import { type LedgerRow, recordWindows } from "../../src/db/ledger/windowStatements.ts";

export async function recordWindow(
  sql: postgres.Sql | postgres.TransactionSql,
  row: LedgerRow & { readonly stream: string; readonly pcode: number; readonly partition?: string; readonly runId?: number | null },
): Promise<number> {
  const { stream, pcode, partition = "", runId = null, ...ledger } = row;
  await recordWindows(sql, { window: { stream, pcode, partition }, runId, ledger: [ledger], marks: null, watermark: null });
  const [found] = await sql<{ id: string }[]>`
    SELECT id::text FROM sync_windows WHERE stream = ${stream} AND pcode = ${pcode}::bigint AND partition = ${partition}
      AND window_start = ${new Date(row.windowStart)} AND window_end = ${new Date(row.windowEnd)}`;
  return Number(found!.id);
}
