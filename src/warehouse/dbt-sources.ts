// `apm-sync schema --dbt`: the warehouse as a dbt sources file (version 2). One source named after
// the schema; every table and view of the data dictionary (what `schema --json` lists), described
// as the database's comments describe them; freshness on each table a windowed stream fills.
//
// loaded_at_field: a windowed table's time column, the one it is partitioned on (window_start, ts,
// event_time): "how recent is the data" is what a dbt user asks, and the newest window is what
// answers it. synced_at would answer "when did anything write": every run re-reads its lookback
// and rewrites those rows, and a `backfill --refetch` of last year writes old rows now, so it looks
// fresh while no new window lands. The windowed tables without a partition column (agent_inventory,
// visitors_monthly) keep one row per agent or month, rewritten in place, with no time column that
// orders windows: there synced_at is the nearest answer.
//
// Thresholds from the grain the engine plans with (config `grains`, else the catalogue's, else
// APM_GRAIN; clamped to the operation's limit): a sync running every grain keeps the newest window
// at most 2 grains + settle old (the window in progress, the one awaiting its settle time, the
// settle), so a warning at 2 grains + settle means one run missed, an error at 6 grains + settle
// means several. A table several streams fill takes the shortest grain among those synced by
// default: its newest rows come from them.

import { OPERATIONS } from "../catalogue/index.ts";
import { DAY, HOUR, isWindowed, MINUTE } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { columnComment, relationComment } from "../dictionary/comments.ts";
import { DICTIONARY, type DictionaryRelation } from "../dictionary/index.ts";
import { type YamlValue, yamlDocument } from "../util/yaml-text.ts";
import { streamGrain } from "../windows/plan.ts";

const WARN_AFTER_GRAINS = 2;
const ERROR_AFTER_GRAINS = 6;

/** How stale a windowed table may get, and the column that says how recent it is. */
interface TableFreshness {
  readonly loadedAtField: string;
  readonly grainMs: number;
  readonly warnAfterMs: number;
  readonly errorAfterMs: number;
}

/** Freshness of `relation`, or null when no windowed stream fills it (dimensions, snapshots, bookkeeping, views). */
function tableFreshness(relation: DictionaryRelation, config: Config): TableFreshness | null {
  if (relation.kind !== "table") return null;
  const streams = OPERATIONS.filter((op) => op.stream?.table === relation.name && isWindowed(op.stream));
  if (streams.length === 0) return null;
  const usual = streams.filter((op) => op.stream!.enabledByDefault);
  const grains = (usual.length > 0 ? usual : streams).map((op) => streamGrain(config.sync, op));
  const grainMs = Math.min(...grains);
  const lag = config.sync.settleMs;
  return {
    loadedAtField: relation.partitionedOn ?? "synced_at",
    grainMs,
    warnAfterMs: WARN_AFTER_GRAINS * grainMs + lag,
    errorAfterMs: ERROR_AFTER_GRAINS * grainMs + lag,
  };
}

const PERIODS = [
  { period: "day", ms: DAY },
  { period: "hour", ms: HOUR },
  { period: "minute", ms: MINUTE },
] as const;

/**
 * dbt's `{count, period}` for `ms`, rounded up (a threshold is never earlier than derived): the
 * coarsest of day, hour, minute that adds at most 5% (2 days + 10 min: 49 hour, not 2890 minute).
 */
export function dbtPeriod(ms: number): { count: number; period: "day" | "hour" | "minute" } {
  for (const p of PERIODS) {
    const count = Math.max(1, Math.ceil(ms / p.ms));
    if (count * p.ms - ms <= ms / 20 || p.period === "minute") return { count, period: p.period };
  }
  throw new Error("unreachable");
}

function table(relation: DictionaryRelation, config: Config): YamlValue {
  const freshness = tableFreshness(relation, config);
  // Under `config:` since dbt 1.10 (freshness since 1.9); older releases read them one level up.
  const fresh = freshness
    ? {
        config: {
          loaded_at_field: freshness.loadedAtField,
          freshness: { warn_after: dbtPeriod(freshness.warnAfterMs), error_after: dbtPeriod(freshness.errorAfterMs) },
        },
      }
    : {};
  return {
    name: relation.name,
    description: relationComment(relation),
    ...fresh,
    columns: relation.columns.map((c) => ({ name: c.name, description: columnComment(c), data_type: c.type })),
  };
}

/** The sources file: one source (the schema `config.dbSchema`) with every relation of `relations`. */
export function dbtSources(config: Config, relations: readonly DictionaryRelation[] = DICTIONARY): string {
  const source = {
    name: config.dbSchema,
    schema: config.dbSchema,
    description:
      "The warehouse apm-sync fills from the application-monitoring Open API. Times are UTC; rows of windowed tables " +
      "belong to the window they were fetched for (sum windows, never average averages).",
    tables: relations.map((r) => table(r, config)),
  };
  return yamlDocument({ version: 2, sources: [source] }, [
    "Generated by `apm-sync schema --dbt` from apm-sync's data dictionary; regenerate after an upgrade.",
    `Freshness: warn after ${WARN_AFTER_GRAINS} grains + settle, error after ${ERROR_AFTER_GRAINS} grains + settle (APM_GRAIN, APM_SETTLE).`,
  ]);
}
