// `reset`: the ledger forgets windows, so that the planner sees them as missing again.
import type { SqlHandle } from "../driver/exec.ts";

/** Deletes the ledger rows with these ids; returns how many went. Run it in the reset's transaction. */
export async function deleteLedgerWindows(sql: SqlHandle, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await sql`DELETE FROM "sync_windows" WHERE "id" = ANY(${ids.map(String)}::bigint[])`.execute();
  return result.count;
}
