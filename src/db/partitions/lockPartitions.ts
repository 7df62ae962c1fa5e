// The lock under which a table's partitions are made (ensurePartitions) and dropped (dropPartitions):
// never both at once, and never the same one twice.
import type postgres from "postgres";
import { LOCK_KEYS } from "../driver/lockKeys.ts";

/** Takes the transaction-scoped advisory lock of `table`'s partitions (in the connection's schema). */
export async function lockPartitions(tx: postgres.TransactionSql, table: string): Promise<void> {
  await tx.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_KEYS.partitions})`, [table]);
}
