// Makes the monthly partitions a write needs, before the write's transaction (docs/design.md "Time partitions":
// a partition exists before the first write that needs it, and no default partition catches
// what has none). Idempotent, and safe when several processes do it at once.
import type postgres from "postgres";
import { addMonths, monthStart } from "../../windows/months.ts";
import { quoteIdent } from "../sqlText.ts";
import { type TableInfo, tableInfo } from "../tables.ts";
import { lockPartitions } from "./lockPartitions.ts";
import { partitionCache } from "./partitionCache.ts";
import { partitionName } from "./partitionName.ts";
import { readPartitionNames } from "./readPartitionNames.ts";

/**
 * Creates the partitions of `table` for the months holding `months` (epoch ms, any instant of
 * each) that do not exist yet; returns their names. A table that is not partitioned needs none.
 * Months this process saw exist cost no round trip (db/partitions/partitionCache.ts).
 *
 * Never call it inside a window's transaction. Each partition is made as a table of its own
 * (LIKE the parent) and then attached: ATTACH takes SHARE UPDATE EXCLUSIVE on the parent, which
 * lets the window transactions in flight (ROW EXCLUSIVE) and readers go on, where CREATE TABLE ..
 * PARTITION OF takes ACCESS EXCLUSIVE: it would wait for every writer and stall the ones behind it,
 * and two window transactions doing it would deadlock. Two processes making the same partition
 * take turns on an advisory lock of the table; the second finds it attached and does nothing.
 */
export async function ensurePartitions(sql: postgres.Sql, table: string, months: readonly number[], now = Date.now()): Promise<string[]> {
  const info = tableInfo(table);
  if (info.partitionColumn === null || months.length === 0) return [];
  const cache = partitionCache(sql, info.name);
  const wanted = [...new Set(months.map(monthStart))].filter((m) => !cache.has(m, now));
  if (wanted.length === 0) return [];
  // The windows in flight at a run's start all find the cache empty at once: one of them asks the
  // database, the others wait for it and look again (most then need nothing).
  const under = cache.pending();
  if (under) {
    await under.catch(() => {});
    return ensurePartitions(sql, table, months, now);
  }
  return cache.asking(
    makePartitions(sql, info, wanted).then((made) => {
      // Remembered before the ask settles: a waiter that looks again finds them.
      for (const m of wanted) cache.add(m, now);
      return made;
    }),
  );
}

/** The months `wanted` of `info`'s table made where missing; returns the names of those it made. */
async function makePartitions(sql: postgres.Sql, info: TableInfo, wanted: readonly number[]): Promise<string[]> {
  const attached = await readPartitionNames(sql, info.name);
  const missing = wanted.filter((m) => !attached.has(partitionName(info.name, m)));
  const created =
    missing.length === 0
      ? []
      : await sql.begin(async (tx) => {
          await lockPartitions(tx, info.name);
          const meanwhile = await readPartitionNames(tx, info.name);
          const made: string[] = [];
          for (const month of missing.filter((m) => !meanwhile.has(partitionName(info.name, m)))) {
            const name = quoteIdent(partitionName(info.name, month));
            await tx.unsafe(
              `CREATE TABLE IF NOT EXISTS ${name} (LIKE ${quoteIdent(info.name)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`,
            );
            await tx.unsafe(
              `ALTER TABLE ${quoteIdent(info.name)} ATTACH PARTITION ${name} FOR VALUES FROM ('${bound(month)}') TO ('${bound(addMonths(month, 1))}')`,
            );
            made.push(partitionName(info.name, month));
          }
          return made;
        });
  return created;
}

/** A month's first instant as Postgres reads it (`12345-01-01` too, where ISO 8601 would need `+012345`). */
function bound(month: number): string {
  const d = new Date(month);
  return `${String(d.getUTCFullYear()).padStart(4, "0")}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-01 00:00:00+00`;
}
