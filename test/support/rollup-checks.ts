// Rollups checked against the raw rows they summarise, independently of src/db/rollupSql.ts: a
// plain GROUP BY of every bucket straight from the raw table (the daily one too, not from the
// hourly rollup), compared value by value (sums of doubles within 1e-9 relative), and each
// bucket's coverage (as the views show it) computed here from the ledger rows.
import type postgres from "postgres";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { dailyRows, hourlyRows } from "../../src/db/rollupSql.ts";
import { ROLLUP_GRAINS, ROLLUPS, type RollupMeasure, type RollupSpec, rollupTableName } from "../../src/db/rollups.ts";

const q = (s: string) => `"${s}"`;
const UNIT = { hourly: "hour", daily: "day" } as const;
const SIZE = { hourly: 3_600_000, daily: 86_400_000 } as const;

function reference(m: RollupMeasure): string {
  if (m.agg === "count") return "count(*)";
  const v = m.times ? `${q(m.of!)} * ${q(m.times)}` : q(m.of!);
  return `${m.agg}(${v}) FILTER (WHERE ${m.when ? `${q(m.when)} IS NOT NULL` : "true"})`;
}

/**
 * A rollup's rows as its views read them: the table's, and for a daily rollup with a coverage the
 * open days' too (computed when read); the hours of one read from its raw rows, those rows grouped.
 */
function rollupRows(spec: RollupSpec, grain: (typeof ROLLUP_GRAINS)[number]): string {
  if (grain === "hourly" && spec.hoursFromRaw) return `(${hourlyRows(spec)})`;
  return grain === "daily" && spec.coverage ? `(${dailyRows(spec)})` : q(rollupTableName(spec, grain));
}

/**
 * Rows of every rollup that differ from a GROUP BY of its raw table (missing, extra, repeated or
 * other values).
 */
export async function rollupDiffs(sql: postgres.Sql): Promise<string[]> {
  const out: string[] = [];
  for (const spec of ROLLUPS)
    for (const grain of ROLLUP_GRAINS) {
      const keys = ["pcode", ...spec.scope, "bucket_start", ...spec.keys];
      const measures = Object.entries(spec.measures);
      const ref = `SELECT ${["pcode", ...spec.scope].map(q).join(", ")}, date_trunc('${UNIT[grain]}', ${q(spec.time)}, 'UTC') AS "bucket_start",
        ${spec.keys.map(q).join(", ")}, ${spec.labels.map((l) => `max(${q(l)}) AS ${q(l)}`).join(", ")},
        ${measures.map(([c, m]) => `${reference(m)} AS ${q(c)}`).join(", ")}
        FROM ${q(spec.source)} GROUP BY ${keys.map(q).join(", ")}`;
      // A row's key as text (NULL keys included), so the FULL JOIN can hash it.
      const key = `ROW(${keys.map(q).join(", ")})::text AS "k"`;
      const differs = [
        ...spec.labels.map((l) => `r.${q(l)} IS DISTINCT FROM x.${q(l)}`),
        ...measures.map(
          ([c]) => `NOT (r.${q(c)} IS NOT DISTINCT FROM x.${q(c)} OR abs(r.${q(c)} - x.${q(c)}) <= 1e-9 * greatest(abs(r.${q(c)}), 1))`,
        ),
      ];
      const rows = await sql.unsafe<{ row: string }[]>(
        `SELECT concat_ws(' ', CASE WHEN r."pcode" IS NULL THEN 'extra' WHEN x."pcode" IS NULL THEN 'missing' ELSE 'differs' END,
           coalesce(r."pcode", x."pcode"), coalesce(r."bucket_start", x."bucket_start")) AS row
         FROM (SELECT *, ${key} FROM (${ref}) AS r0) r FULL JOIN (SELECT *, ${key} FROM ${rollupRows(spec, grain)} AS x0) x ON r."k" = x."k"
         WHERE r."pcode" IS NULL OR x."pcode" IS NULL OR ${differs.join(" OR ")} LIMIT 5`,
      );
      out.push(...rows.map((r) => `${rollupTableName(spec, grain)}: ${r.row}`));
      // A bucket held twice (a day in the table and open at once) would match the reference twice.
      const repeated = await sql.unsafe<{ k: string }[]>(
        `SELECT ${key} FROM ${rollupRows(spec, grain)} AS x0 GROUP BY 1 HAVING count(*) > 1 LIMIT 5`,
      );
      out.push(...repeated.map((r) => `${rollupTableName(spec, grain)}: repeated ${r.k}`));
    }
  return out;
}

/**
 * Buckets whose coverage in the reporting views (stat_transaction_hourly ...) differs from the
 * share of them the stream's done/truncated ledger windows cover.
 */
export async function coverageDiffs(sql: postgres.Sql): Promise<string[]> {
  const out: string[] = [];
  for (const spec of ROLLUPS.filter((r) => r.coverage)) {
    const stream = OPERATIONS.find((op) => op.stream?.table === spec.source)!.id;
    const windows = await sql<{ pcode: string; s: number; e: number }[]>`
      SELECT pcode::text, extract(epoch FROM window_start) * 1000 AS s, extract(epoch FROM window_end) * 1000 AS e
      FROM sync_windows WHERE stream = ${stream} AND status IN ('done', 'truncated') AND partition = ''`;
    for (const grain of ROLLUP_GRAINS) {
      const view = `${spec.source}_${grain}`;
      const buckets = await sql.unsafe<{ pcode: string; b: number; coverage: number }[]>(
        `SELECT DISTINCT pcode::text, extract(epoch FROM bucket_start) * 1000 AS b, coverage FROM ${q(view)}`,
      );
      for (const bucket of buckets) {
        const { pcode, coverage } = bucket;
        const b = Number(bucket.b);
        const size = SIZE[grain];
        const covered = windows
          .filter((w) => w.pcode === pcode)
          .reduce((n, w) => n + Math.max(0, Math.min(Number(w.e), b + size) - Math.max(Number(w.s), b)), 0);
        const expected = Math.min(1, covered / size);
        if (Math.abs(expected - coverage) > 1e-9)
          out.push(`${view} ${pcode} ${new Date(b).toISOString()}: ${coverage}, ledger says ${expected}`);
      }
    }
  }
  return out.slice(0, 10);
}
