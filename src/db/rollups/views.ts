// The rollups' views, exact at every commit (TimescaleDB's real-time aggregates): the materialised
// buckets where no mark is, and the buckets computed from the raw rows where one is (spec.ts).
// A statistic's whole hours are read from its raw rows as they are (they are hourly already); its
// hourly table holds split windows' leaves, summed, and the hours whose raw months prune dropped.
// A bucket's coverage: the ledger's, computed, where the bucket is marked; else as stored at its refresh.
import { quoteIdent as q } from "../sqlText.ts";
import { ROLLUP_GRAINS, type RollupGrain, type RollupSpec, rollupTableName, type ViewColumn } from "./spec.ts";
import { bucketColumns, bucketsFromRaw, isMarked, ledgerCoverage, markedBuckets, storedCoverage, wholeHour, wholeHourRows } from "./sql.ts";

/** The view of a rollup's grain: `stat_transaction_hourly`. */
function rollupViewName(spec: RollupSpec, grain: RollupGrain): string {
  return `${spec.source}_${grain}`;
}

/** The rows of a grain as the view reads them, before its columns are computed. */
function viewRows(spec: RollupSpec, grain: RollupGrain): string {
  const table = `SELECT ${bucketColumns(spec)
    .map((c) => `t.${q(c)}`)
    .join(", ")} FROM ${q(rollupTableName(spec, grain))} AS t
  WHERE NOT ${isMarked(spec, grain, 't."pcode"', 't."bucket_start"')}`;
  const hourlyRaw = grain === "hourly" && spec.hoursFromRaw;
  const marked = bucketsFromRaw(spec, grain, markedBuckets(spec, grain), hourlyRaw ? `NOT ${wholeHour(spec)}` : undefined);
  return [table, ...(hourlyRaw ? [wholeHourRows(spec)] : []), marked].join("\nUNION ALL\n");
}

function viewColumn(c: ViewColumn): string {
  return typeof c === "string" ? `r.${q(c)}` : `${c[1]} AS ${q(c[0])}`;
}

/** CREATE OR REPLACE VIEW of a rollup's grain; `stream` is the one whose ledger says a bucket's coverage. */
function rollupView(spec: RollupSpec, grain: RollupGrain, stream: string | null): string {
  const at = 'r."bucket_start"';
  const coverage =
    spec.coverage && stream
      ? [
          `(CASE WHEN ${isMarked(spec, grain, 'r."pcode"', at)} THEN ${ledgerCoverage(grain, stream, 'r."pcode"', at)}
    ELSE ${storedCoverage(grain, stream, 'r."pcode"', at)} END)::double precision AS "coverage"`,
        ]
      : [];
  const columns = [
    ...["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels].map((c) => `r.${q(c)}`),
    ...spec.view.map(viewColumn),
    ...coverage,
  ];
  return `CREATE OR REPLACE VIEW ${q(rollupViewName(spec, grain))} AS
SELECT ${columns.join(", ")}
FROM (${viewRows(spec, grain)}) AS r`;
}

/** Every rollup's views, hourly and daily; `writerOf` names the stream writing a rollup with a coverage. */
export function rollupViews(specs: readonly RollupSpec[], writerOf: (source: string) => string | null): string[] {
  return specs.flatMap((spec) => ROLLUP_GRAINS.map((grain) => rollupView(spec, grain, writerOf(spec.source))));
}
