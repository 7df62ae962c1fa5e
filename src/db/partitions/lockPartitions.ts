// The lock under which a table's partitions are made (ensurePartitions) and dropped (dropPartitions):
// never both at once, and never the same one twice.
import type postgres from "postgres";

/** Takes the transaction-scoped advisory lock of `table`'s partitions (in the connection's schema). */
export async function lockPartitions(tx: postgres.TransactionSql, table: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('apm-sync:partitions'), hashtext(current_schema() || '.' || ${table}))`;
}
