// The names a retention key can be (`retention`, APM_RETENTION): stream ids, prefixes, kinds and
// rollup keys, read off the partitioned tables and the streams that write them. The settings check
// keys against it; prune (src/warehouse/retention.ts) works from the same tables.
import { OPERATIONS } from "../catalogue/index.ts";
import { isWindowed } from "../catalogue/types.ts";
import { ROLLUP_GRAINS, ROLLUPS, rollupTableName } from "../db/rollups/spec.ts";
import { partitionedTables } from "../db/tables.ts";
import { didYouMean } from "./suggest.ts";

/** Keys of the rollup tables' retention (ROLLUP_SOURCES). */
export const ROLLUP_KEYS = ["rollup", "rollup.hourly", "rollup.daily"] as const;

/** A table `prune` works on, and the names its retention is looked up by: per source, most specific first. */
export interface PrunableTable {
  readonly table: string;
  /** What sets its retention: the streams that write it (their ids), or the rollup key it holds. */
  readonly sources: readonly { readonly id: string; readonly names: readonly string[] }[];
  /** The streams whose ledger windows lose their rows with its partitions (none for a rollup). */
  readonly writers: readonly string[];
}

const WINDOWED = OPERATIONS.filter((op) => op.stream && isWindowed(op.stream));

/**
 * The rollup tables (src/db/rollups/spec.ts), each with its grain's key: rollup.hourly, rollup.daily
 * (their coverage is not partitioned: prune deletes its rows, warehouse/prune.ts). The hourly table
 * of a rollup read from its raw rows (hoursFromRaw) holds the hours the view does not read from them
 * (split leaves): it keeps them as long as the raw rows too, so that no hour of them goes missing.
 */
const ROLLUP_SOURCES = new Map<string, PrunableTable["sources"]>([
  ...ROLLUPS.flatMap((spec) =>
    ROLLUP_GRAINS.map((grain): [string, PrunableTable["sources"]] => {
      const own = rollupSource(`rollup.${grain}`);
      const raw = grain === "hourly" && spec.hoursFromRaw ? writerSources(spec.source) : [];
      return [rollupTableName(spec, grain), [own, ...raw]];
    }),
  ),
]);

/** The streams that write raw table `table`, with the names that can set their retention. */
function writerSources(table: string): PrunableTable["sources"] {
  return WINDOWED.filter((op) => op.stream!.table === table).map((op) => ({ id: op.id, names: streamNames(op.id, op.stream!.kind) }));
}

/** `series.apdex.avg` -> [series.apdex.avg, series.apdex, series, points]: the names that can set its retention. */
function streamNames(id: string, kind: string): string[] {
  const parts = id.split(".");
  return [...parts.map((_, i) => parts.slice(0, parts.length - i).join(".")), kind];
}

export function rollupSource(key: (typeof ROLLUP_KEYS)[number]): PrunableTable["sources"][number] {
  return { id: key, names: key === "rollup" ? ["rollup"] : [key, "rollup"] };
}

/** Whether `table` holds a rollup (src/db/rollups/spec.ts). */
export function isRollupTable(table: string): boolean {
  return ROLLUP_SOURCES.has(table);
}

/** Every partitioned table with its sources: the declaration prune works from. */
export function prunableTables(): PrunableTable[] {
  return partitionedTables().map((t) => {
    const rollup = ROLLUP_SOURCES.get(t.name);
    if (rollup) return { table: t.name, sources: rollup, writers: [] };
    const sources = writerSources(t.name);
    return { table: t.name, sources, writers: sources.map((s) => s.id) };
  });
}

/** Why `key` cannot be a retention key (did you mean...), or null when it can. */
export function retentionKeyProblem(key: string): string | null {
  const names = retentionNames();
  if (names.includes(key)) return null;
  const stream = OPERATIONS.find((op) => op.stream && (op.id === key || op.id.startsWith(`${key}.`)));
  if (stream) return `${key} writes no time-partitioned table (${stream.stream!.table} keeps no history to drop)`;
  return `unknown stream, prefix, kind or rollup ${JSON.stringify(key)}${didYouMean(key, names)}`;
}

/** Every name a retention key can be. */
export function retentionNames(): string[] {
  return [...new Set([...prunableTables().flatMap((t) => t.sources.flatMap((s) => s.names)), ...ROLLUP_KEYS])].sort();
}
