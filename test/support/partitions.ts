// Tests that write through the DB verbs directly do what the write path does first
// (engine/run-windowed.ts): make the monthly partitions the rows go to.
import type postgres from "postgres";
import { ensurePartitions } from "../../src/db/partitions/ensurePartitions.ts";
import { tableInfo } from "../../src/db/tables.ts";
import type { Row } from "../../src/db/write/row.ts";
import { monthsOf } from "../../src/windows/months.ts";

/** Makes the partitions of `table` for the rows' partition-column values and for `times` (e.g. the window). */
export async function partitionsFor(sql: postgres.Sql, table: string, rows: readonly Row[], ...times: (Date | number)[]): Promise<void> {
  const column = tableInfo(table).partitionColumn;
  if (column === null) return;
  await ensurePartitions(sql, table, monthsOf([...rows.map((r) => r[column]), ...times]));
}
