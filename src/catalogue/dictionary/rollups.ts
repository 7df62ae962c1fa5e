// The rollup tables (src/db/rollups.ts): their words come from the declaration, and a column that
// carries a raw table's column (keys, labels, scope) keeps that column's meaning.
import {
  COVERAGE_TABLE,
  OPEN_DAYS_TABLE,
  ROLLUP_GRAINS,
  ROLLUPS,
  type RollupGrain,
  type RollupMeasure,
  type RollupSpec,
  rollupTableName,
} from "../../db/rollups.ts";
import { seriesDocs } from "./series.ts";
import { statDocs } from "./stats.ts";
import type { ColumnDoc, DocGroup, TableDoc } from "./types.ts";

const RAW: Readonly<Record<string, TableDoc | undefined>> = { ...statDocs.tables, ...seriesDocs.tables };
const UNIT: Readonly<Record<RollupGrain, string>> = { hourly: "hour", daily: "day (UTC)" };

function raw(source: string, column: string): ColumnDoc {
  const doc = RAW[source]?.columns[column];
  return { text: doc?.text ?? "", ...(doc?.unit ? { unit: doc.unit } : {}) };
}

/** A measure in words: what is summed (or counted), over which rows. */
function measureDoc(spec: RollupSpec, grain: RollupGrain, m: RollupMeasure): ColumnDoc {
  const over = `the ${UNIT[grain]}'s rows of ${spec.source}`;
  if (m.agg === "count")
    return { text: `Rows of ${spec.source} in the bucket (for statistics: the fetch windows the key appeared in).`, unit: "count" };
  const what = m.times ? `${m.of} * ${m.times}` : m.of!;
  const verb = { sum: "Sum of", min: "Smallest", max: "Largest" }[m.agg];
  const only = m.when ? ` that have a ${m.when}` : "";
  const unit = m.times ? undefined : raw(spec.source, m.of!).unit;
  return { text: `${verb} ${what} over ${over}${only}.`, ...(unit ? { unit } : {}) };
}

function rollupDoc(spec: RollupSpec, grain: RollupGrain): TableDoc {
  const columns: Record<string, ColumnDoc> = {
    pcode: { text: "Project code." },
    bucket_start: { text: `Start of the ${UNIT[grain]} (UTC) a row of ${spec.source} falls in by its ${spec.time}.` },
  };
  for (const c of [...spec.scope, ...spec.keys]) columns[c] = raw(spec.source, c);
  for (const c of spec.labels) columns[c] = { text: `${raw(spec.source, c).text} max() over the bucket (one value per key in practice).` };
  for (const [c, m] of Object.entries(spec.measures)) columns[c] = measureDoc(spec, grain, m);
  return { description: rollupDescription(spec, grain), columns };
}

function rollupDescription(spec: RollupSpec, grain: RollupGrain): string {
  if (grain === "hourly" && spec.hoursFromRaw)
    return (
      `Hourly rollup of ${spec.source}: only the hours its view cannot read from the rows of ${spec.source} as they are, ` +
      "those of split windows' leaves (windows shorter than an hour, summed by the sync in the transaction that writes them) " +
      "and those whose raw months prune dropped (written by prune before it drops them). Read it through its view."
    );
  if (grain === "hourly")
    return (
      `Hourly rollup of ${spec.source}, kept by the sync: computed from its rows in the transaction that writes a window, ` +
      "for exactly the hours it touches. Read it through its view."
    );
  const hourly = spec.hoursFromRaw ? `the rows of ${spec.source}` : rollupTableName(spec, "hourly");
  if (!spec.coverage)
    return `Daily rollup of ${spec.source}, kept by the sync: computed from ${hourly} in the transaction that writes a window, for the days it touches. Read it through its view.`;
  return (
    `Daily rollup of ${spec.source}, kept by the sync: a day is computed from ${hourly} once the ledger covers all of it, ` +
    `in the transaction of the window that finds its last hour there (or at the end of the run, when its last windows were ` +
    `in flight together). Until then the day is open (${OPEN_DAYS_TABLE}) and has no rows here: its view computes it from ` +
    `${hourly}. Read it through its view.`
  );
}

const COVERAGE_DOC: ColumnDoc = {
  text: "Share of the bucket covered by done or truncated ledger windows of the stream (1: all of it fetched; less: the current hour, a backfill under way, a failed window).",
  unit: "fraction (0 to 1)",
};

const tables: Record<string, TableDoc> = {};
for (const spec of ROLLUPS) for (const grain of ROLLUP_GRAINS) tables[rollupTableName(spec, grain)] = rollupDoc(spec, grain);

tables[COVERAGE_TABLE] = {
  description:
    "The share of each hour of a stream and project that the ledger covers, kept by the sync with the rollups of the " +
    "stream's table, and of each closed day (the statistics' views show it as coverage; an open day's is the sum of its " +
    "hours' / 24, computed when read). An hour without a row here is not covered at all.",
  columns: {
    stream: { text: "Stream id (catalogue operation) whose ledger windows cover the bucket." },
    pcode: { text: "Project code." },
    grain: { text: "hourly or daily: the bucket's size." },
    bucket_start: { text: "Start of the hour or day (UTC)." },
    coverage: COVERAGE_DOC,
  },
};

tables[OPEN_DAYS_TABLE] = {
  description:
    "The open days of the statistics' daily rollups: days the ledger does not cover wholly yet (the current day, a backfill " +
    "under way, a failed window). Their daily rows are not stored: the daily views compute them from the raw rows when " +
    "read. The window that finds a day's last hour there writes its rows and removes it from here (or the end of the " +
    "run, when the day's last windows were in flight together).",
  columns: {
    source: { text: "The raw table of the rollup (stat_transaction ...)." },
    pcode: { text: "Project code." },
    bucket_start: { text: "Start of the day (UTC)." },
  },
};

export const rollupDocs: DocGroup = { title: "Rollups", tables };
