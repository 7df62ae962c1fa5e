// The rollup tables (src/db/rollups/spec.ts): their words come from the declaration, and a column that
// carries a raw table's column (keys, labels, scope) keeps that column's meaning.

import { seriesDocs } from "../../catalogue/series.ts";
import { statDocs } from "../../catalogue/stats.ts";
import type { ColumnDoc, DocGroup, TableDoc } from "../../kernel/docs.ts";
import {
  COVERAGE_TABLE,
  MARKS_TABLE,
  OPEN_DAYS_TABLE,
  ROLLUP_GRAINS,
  ROLLUPS,
  type RollupGrain,
  type RollupMeasure,
  type RollupSpec,
  rollupTableName,
} from "./spec.ts";

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

const REFRESHED =
  "Kept by the refresher after the write (at the end of each run, each scheduled tick and before prune), for the buckets " +
  `a window's transaction marked (${MARKS_TABLE}); until then the views compute a marked bucket from the raw rows. Read it through its view.`;

function rollupDescription(spec: RollupSpec, grain: RollupGrain): string {
  if (grain === "hourly" && spec.hoursFromRaw)
    return (
      `Hourly rollup of ${spec.source}: only the hours its view cannot read from the rows of ${spec.source} as they are, ` +
      "those of split windows' leaves (windows shorter than an hour, summed) and those whose raw months prune dropped " +
      `(written by prune before it drops them). ${REFRESHED}`
    );
  if (grain === "hourly") return `Hourly rollup of ${spec.source}, computed from its rows. ${REFRESHED}`;
  return `Daily rollup of ${spec.source}, computed from its rows. ${REFRESHED}`;
}

const COVERAGE_DOC: ColumnDoc = {
  text: "Share of the bucket covered by done or truncated ledger windows of the stream (1: all of it fetched; less: the current hour, a backfill under way, a failed window).",
  unit: "fraction (0 to 1)",
};

const tables: Record<string, TableDoc> = {};
for (const spec of ROLLUPS) for (const grain of ROLLUP_GRAINS) tables[rollupTableName(spec, grain)] = rollupDoc(spec, grain);

tables[COVERAGE_TABLE] = {
  description:
    "The share of each hour and day of a stream and project that the ledger covers, stored by the refresher with the " +
    "rollups of the stream's table (the views show it as coverage; for a marked bucket they compute it from the ledger). " +
    "A bucket without a row here is not covered at all.",
  columns: {
    stream: { text: "Stream id (catalogue operation) whose ledger windows cover the bucket." },
    pcode: { text: "Project code." },
    grain: { text: "hourly or daily: the bucket's size." },
    bucket_start: { text: "Start of the hour or day (UTC)." },
    coverage: COVERAGE_DOC,
  },
};

tables[MARKS_TABLE] = {
  description:
    "The rollup hours written since their last refresh: a window's transaction marks the hours whose rows it wrote (or " +
    "whose ledger coverage it changed), the refresher recomputes their hours and days and deletes the marks it took. " +
    "The views compute a marked bucket from the raw rows and the ledger, so they are exact at every commit.",
  columns: {
    source: { text: "The raw table of the rollup (stat_transaction ...)." },
    pcode: { text: "Project code." },
    hour: { text: "Start of the marked hour (UTC)." },
    partial: {
      text:
        "Whether the window's rows are not whole hours (a split leaf, a window off the hour): only such hours of a " +
        "statistic are kept in its hourly table (whole hours are read from the raw rows). True where unknown.",
    },
  },
};

tables[OPEN_DAYS_TABLE] = {
  description:
    "No longer written: the open days of an earlier release's daily rollups, turned into marks by migration 0018. " +
    "Kept empty until no view of an older release reads it.",
  columns: {
    source: { text: "The raw table of the rollup (stat_transaction ...)." },
    pcode: { text: "Project code." },
    bucket_start: { text: "Start of the day (UTC)." },
  },
};

export const rollupDocs: DocGroup = { title: "Rollups", tables };
