// How long each partitioned table keeps its rows (`retention`, APM_RETENTION; issue 18 item 3).
// Keys name streams (an id, or a prefix such as `stat`), a stream kind (`aggregate`, `points`), or
// rollups (`rollup.hourly`, `rollup.daily`, `rollup`); the most specific key that matches a stream
// decides for it. Only whole monthly partitions are dropped, so a table fed by several streams
// keeps the longest retention of its streams, and keeps everything while one of them has none.
import { OPERATIONS } from "../catalogue/index.ts";
import { DAY, isWindowed } from "../catalogue/types.ts";
import { didYouMean } from "../config/suggest.ts";
import { ROLLUP_GRAINS, ROLLUPS, rollupTableName } from "../db/rollups/spec.ts";
import { partitionedTables } from "../db/tables.ts";
import { alignDown } from "../windows/grid.ts";

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

/** What a table keeps: `ms` (null: everything) and the setting or source that decides it. */
export interface TableRetention {
  readonly table: string;
  readonly ms: number | null;
  /** `stat=400d`, or why nothing is dropped (`series.apdex has no retention`). */
  readonly why: string;
}

/** The retention of one table under `retention` (key -> ms). */
export function tableRetention(retention: Readonly<Record<string, number>>, t: Pick<PrunableTable, "table" | "sources">): TableRetention {
  let longest: { ms: number; key: string } | null = null;
  for (const source of t.sources) {
    const key = source.names.find((n) => retention[n] !== undefined);
    if (key === undefined) return { table: t.table, ms: null, why: `${source.id} has no retention` };
    if (!longest || retention[key]! > longest.ms) longest = { ms: retention[key]!, key };
  }
  if (!longest) return { table: t.table, ms: null, why: "no stream writes it" };
  return { table: t.table, ms: longest.ms, why: `${longest.key}=${formatRetention(longest.ms)}` };
}

/** The retention of the table a stream writes (null: it keeps everything, or is not partitioned). */
export function streamRetention(retention: Readonly<Record<string, number>>, streamId: string): TableRetention | null {
  const t = prunableTables().find((p) => p.writers.includes(streamId));
  return t ? tableRetention(retention, t) : null;
}

/**
 * The first instant a retention keeps at `now`: the start of the UTC day `ms` before. `prune`
 * drops the partitions that end by then; a backfill may not reach before it, a sync starts there.
 */
export function retentionStart(now: number, ms: number): number {
  return alignDown(now - ms, DAY);
}

const UNITS: readonly [string, number][] = [
  ["y", 365 * DAY],
  ["w", 7 * DAY],
  ["d", DAY],
];

/** `400d`, `12w`, `5y`: as the setting was written where it divides evenly. */
export function formatRetention(ms: number): string {
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0) ?? ["d", DAY];
  return `${Math.round(ms / size)}${unit}`;
}

/**
 * Why a backfill of `streams` from `from` is refused: it reaches before what the retention keeps
 * (a range already pruned, or one the next prune drops); null when it does not.
 */
export function retentionProblem(
  retention: Readonly<Record<string, number>>,
  streams: readonly string[],
  from: number,
  now: number,
): string | null {
  const refused = streams.flatMap((id) => {
    const kept = streamRetention(retention, id);
    return kept?.ms != null && from < retentionStart(now, kept.ms) ? [{ id, kept, start: retentionStart(now, kept.ms) }] : [];
  });
  if (refused.length === 0) return null;
  const latest = Math.max(...refused.map((r) => r.start));
  const which = refused.map((r) => `${r.id} (${r.kept.why})`).join(", ");
  return (
    `--from ${new Date(from).toISOString()} reaches before what the retention keeps (APM_RETENTION, file key retention): ${which}; ` +
    `that time is pruned, or would be at the next prune. Backfill from ${new Date(latest).toISOString().slice(0, 10)} on, or lengthen the retention`
  );
}

/** Where the ledger of `streamId` starts: `startMs`, or later where the retention starts (never fetch what prune drops). */
export function retainedStart(retention: Readonly<Record<string, number>>, streamId: string, startMs: number, now: number): number {
  const kept = streamRetention(retention, streamId);
  return kept?.ms == null ? startMs : Math.max(startMs, retentionStart(now, kept.ms));
}
