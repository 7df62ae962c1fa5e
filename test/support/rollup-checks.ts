// Rollups checked against the raw rows they summarise, independently of src/db/rollups' SQL: a
// plain GROUP BY of every bucket straight from the raw table (the daily one too), compared value by
// value (sums of doubles within 1e-9 relative) with what the reporting views show (they must be
// exact at every commit, refreshed or not), and each bucket's coverage computed here from the
// ledger rows.
import type postgres from "postgres";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { recordWindows } from "../../src/db/ledger/windowStatements.ts";
import { type RefreshOptions, refreshRollups } from "../../src/db/rollups/refresh.ts";
import { ROLLUP_GRAINS, ROLLUPS, type RollupMeasure, type RollupSpec } from "../../src/db/rollups/spec.ts";
import { rollupWriter } from "../../src/db/views.ts";

const q = (s: string) => `"${s}"`;
const UNIT = { hourly: "hour", daily: "day" } as const;
const SIZE = { hourly: 3_600_000, daily: 86_400_000 } as const;

function reference(m: RollupMeasure): string {
  if (m.agg === "count") return "count(*)";
  const v = m.times ? `${q(m.of!)} * ${q(m.times)}` : q(m.of!);
  return `${m.agg}(${v}) FILTER (WHERE ${m.when ? `${q(m.when)} IS NOT NULL` : "true"})`;
}

/** Every bucket of `grain` of a rollup as a plain GROUP BY of its raw table: its columns, then `measures`. */
function referenceBuckets(spec: RollupSpec, grain: keyof typeof UNIT, measures: readonly [string, RollupMeasure][]): string {
  const keys = ["pcode", ...spec.scope, "bucket_start", ...spec.keys];
  return `SELECT ${["pcode", ...spec.scope].map(q).join(", ")}, date_trunc('${UNIT[grain]}', ${q(spec.time)}, 'UTC') AS "bucket_start",
    ${spec.keys.map(q).join(", ")}, ${spec.labels.map((l) => `max(${q(l)}) AS ${q(l)}`).join(", ")},
    ${measures.map(([c, m]) => `${reference(m)} AS ${q(c)}`).join(", ")}
    FROM ${q(spec.source)} GROUP BY ${keys.map(q).join(", ")}`;
}

/** The measures a view shows as stored (its other columns are computed from them). */
function shown(spec: RollupSpec): [string, RollupMeasure][] {
  return Object.entries(spec.measures).filter(([c]) => spec.view.includes(c));
}

/**
 * Rows of every rollup view that differ from a GROUP BY of its raw table (missing, extra, repeated
 * or other values). `table`: compare the materialised tables instead (after a refresh, with no mark
 * left; a statistic's hourly table holds only split leaves, so only its daily table is compared).
 */
export async function rollupDiffs(sql: postgres.Sql, opts: { table?: boolean } = {}): Promise<string[]> {
  const out: string[] = [];
  for (const spec of ROLLUPS)
    for (const grain of ROLLUP_GRAINS) {
      if (opts.table && grain === "hourly" && spec.hoursFromRaw) continue;
      const name = opts.table ? `rollup_${spec.source}_${grain}` : `${spec.source}_${grain}`;
      const keys = ["pcode", ...spec.scope, "bucket_start", ...spec.keys];
      const measures = shown(spec);
      const ref = referenceBuckets(spec, grain, measures);
      const view = `SELECT ${[...keys, ...spec.labels, ...measures.map(([c]) => c)].map(q).join(", ")} FROM ${q(name)}`;
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
         FROM (SELECT *, ${key} FROM (${ref}) AS r0) r FULL JOIN (SELECT *, ${key} FROM (${view}) AS x0) x ON r."k" = x."k"
         WHERE r."pcode" IS NULL OR x."pcode" IS NULL OR ${differs.join(" OR ")} LIMIT 5`,
      );
      out.push(...rows.map((r) => `${name}: ${r.row}`));
      // A bucket shown twice (materialised and computed at once) would match the reference twice.
      const repeated = await sql.unsafe<{ k: string }[]>(`SELECT ${key} FROM (${view}) AS x0 GROUP BY 1 HAVING count(*) > 1 LIMIT 5`);
      out.push(...repeated.map((r) => `${name}: repeated ${r.k}`));
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

/** Marks the rollup hours of a write by hand, as a window's transaction does (db/ledger/windowStatements.ts). */
export async function markRollupHours(
  sql: postgres.Sql | postgres.TransactionSql,
  w: { readonly table: string; readonly stream: string; readonly pcode: number; readonly fromMs: number; readonly toMs: number },
): Promise<void> {
  const spec = ROLLUPS.find((r) => r.source === w.table)!;
  const marks = { source: spec.source, spans: [{ fromMs: w.fromMs, toMs: w.toMs }] };
  await recordWindows(sql, {
    window: { stream: w.stream, pcode: w.pcode, partition: "" },
    runId: null,
    ledger: [],
    marks,
    watermark: null,
  });
}

/** The refresher, as runs call it (`opts`: their stop signals and progress). */
export function refresh(sql: postgres.Sql, opts?: RefreshOptions) {
  return refreshRollups(sql, rollupWriter, opts);
}

/**
 * Every bucket of every rollup table and every coverage row written as a release before the
 * refresher kept them (0009 to 0014): each hour and day summed from the raw rows, whole hours
 * included, and each bucket's coverage from the ledger. Written here, independently of src/db/rollups.
 */
export async function fillAsOlderRelease(sql: postgres.Sql): Promise<void> {
  for (const spec of ROLLUPS) {
    const stream = OPERATIONS.find((op) => op.stream?.table === spec.source)?.id;
    for (const grain of ROLLUP_GRAINS) {
      const table = q(`rollup_${spec.source}_${grain}`);
      const measures = Object.entries(spec.measures);
      const columns = ["pcode", ...spec.scope, "bucket_start", ...spec.keys, ...spec.labels, ...measures.map(([c]) => c)];
      await sql.unsafe(`DELETE FROM ${table}`);
      await sql.unsafe(`INSERT INTO ${table} (${columns.map(q).join(", ")}) ${referenceBuckets(spec, grain, measures)}`);
      if (!spec.coverage || !stream) continue;
      const size = `interval '1 ${UNIT[grain]}'`;
      await sql.unsafe(`DELETE FROM "rollup_coverage" WHERE "stream" = '${stream}' AND "grain" = '${grain}'`);
      await sql.unsafe(
        `INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
         SELECT '${stream}', b."pcode", '${grain}', b."at", least(1, coalesce((SELECT sum(extract(epoch FROM
           least(w."window_end", b."at" + ${size}) - greatest(w."window_start", b."at"))) FROM "sync_windows" w
           WHERE w."stream" = '${stream}' AND w."pcode" = b."pcode" AND w."partition" = '' AND w."status" IN ('done', 'truncated')
             AND w."window_start" < b."at" + ${size} AND w."window_end" > b."at"), 0) / extract(epoch FROM ${size}))
         FROM (SELECT DISTINCT "pcode", "bucket_start" AS "at" FROM ${table}) AS b`,
      );
    }
  }
}
