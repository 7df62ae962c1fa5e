// The name of a table's partition for one month: `<table>_pYYYY_MM` (UTC), the name
// migrations/0005_partitions.sql gives the partitions it makes.
import { monthStart } from "../../windows/months.ts";

/** `stat_sql_p2026_03` for stat_sql and a time in March 2026 (UTC). */
export function partitionName(table: string, month: number): string {
  const d = new Date(monthStart(month));
  return `${table}_p${String(d.getUTCFullYear()).padStart(4, "0")}_${String(d.getUTCMonth() + 1).padStart(2, "0")}`;
}
