// How long each partitioned table keeps its rows (`retention`, APM_RETENTION; issue 18 item 3).
// Keys name streams (an id, or a prefix such as `stat`), a stream kind (`aggregate`, `points`), or
// rollups (`rollup.hourly`, `rollup.daily`, `rollup`); the most specific key that matches a stream
// decides for it. Only whole monthly partitions are dropped, so a table fed by several streams
// keeps the longest retention of its streams, and keeps everything while one of them has none.
import { DAY } from "../catalogue/types.ts";
import { type PrunableTable, prunableTables } from "../config/retention-keys.ts";
import { alignDown } from "../windows/grid.ts";

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
