// The names of the partitions attached to a table (cheap: the catalogue only).
import type { SqlHandle } from "../driver/exec.ts";
import { quoteIdent } from "../sqlText.ts";

/** Names of the partitions attached to `table` (in the connection's schema). */
export async function readPartitionNames(sql: SqlHandle, table: string): Promise<Set<string>> {
  const rows = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = to_regclass(${quoteIdent(table)}) AND c.relkind = 'r'`;
  return new Set(rows.map((r) => r.name));
}
