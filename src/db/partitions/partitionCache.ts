// What this process knows to exist among the monthly partitions, per database and table, so that
// a write whose partitions exist costs no round trip (db/partitions/ensurePartitions.ts). Entries expire:
// `prune` in another process may drop a partition this one still remembers.
import type postgres from "postgres";

/** How long a partition seen to exist is trusted without asking the database again. */
const TRUST_MS = 5 * 60_000;

const known = new WeakMap<postgres.Sql, Map<string, Map<number, number>>>();

/** Remembered months of `table` (partition month start -> trusted until), for this pool. */
export function partitionCache(
  sql: postgres.Sql,
  table: string,
): {
  has(month: number, now: number): boolean;
  add(month: number, now: number): void;
  forget(): void;
} {
  let tables = known.get(sql);
  if (!tables) {
    tables = new Map();
    known.set(sql, tables);
  }
  let months = tables.get(table);
  if (!months) {
    months = new Map();
    tables.set(table, months);
  }
  const entries = months;
  return {
    has: (month, now) => (entries.get(month) ?? 0) > now,
    add: (month, now) => void entries.set(month, now + TRUST_MS),
    forget: () => entries.clear(),
  };
}
