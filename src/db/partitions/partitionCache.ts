// What this process knows to exist among the monthly partitions, per database and table, so that
// a write whose partitions exist costs no round trip (db/partitions/ensurePartitions.ts). Entries expire:
// `prune` in another process may drop a partition this one still remembers.
import type postgres from "postgres";

/** How long a partition seen to exist is trusted without asking the database again. */
const TRUST_MS = 5 * 60_000;

/** A table's remembered months (partition month start -> trusted until), and the ask under way. */
interface Known {
  readonly months: Map<number, number>;
  pending: Promise<unknown> | null;
}

const known = new WeakMap<postgres.Sql, Map<string, Known>>();

/** What this pool remembers of `table`'s partitions. */
export function partitionCache(
  sql: postgres.Sql,
  table: string,
): {
  has(month: number, now: number): boolean;
  add(month: number, now: number): void;
  forget(): void;
  /** The ask of the database about this table under way in this process, if any. */
  pending(): Promise<unknown> | null;
  /** Runs `ask` as the one under way: pending() returns it until it has settled (and no longer after). */
  asking<T>(ask: Promise<T>): Promise<T>;
} {
  let tables = known.get(sql);
  if (!tables) {
    tables = new Map();
    known.set(sql, tables);
  }
  let entry = tables.get(table);
  if (!entry) {
    entry = { months: new Map(), pending: null };
    tables.set(table, entry);
  }
  const k = entry;
  return {
    has: (month, now) => (k.months.get(month) ?? 0) > now,
    add: (month, now) => void k.months.set(month, now + TRUST_MS),
    forget: () => k.months.clear(),
    pending: () => k.pending,
    asking: (ask) => {
      // What waiters are given is the promise that clears itself first: one that resumes on it
      // finds no ask under way.
      const settled = ask.finally(() => {
        if (k.pending === settled) k.pending = null;
      });
      k.pending = settled;
      return settled;
    },
  };
}
