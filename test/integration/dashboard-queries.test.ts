// The documented dashboard queries (docs/design.md; issue 18 item 5), as written there, against a warehouse synced
// from the sandbox with history months older than their range: each returns rows, reads only the
// months of its range (older partitions pruned), reads the rollups (a statistic's hours and marked buckets
// from its raw rows), and can be served by an index (with sequential scans off, none is left on the
// tables it reads).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardQueries, forWarehouse } from "../../jobs/dashboard-queries.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

// Real time: the queries say now().
const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const STREAMS = ["stat.transaction", "visitors.d"];

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Loops": number;
  Plans?: PlanNode[];
}

/** The relations a plan read: a partition pruned as the query ran (a correlated subquery's) is never executed. */
function scans(node: PlanNode, out: { type: string; relation: string }[] = []) {
  if (node["Actual Loops"] === 0) return out;
  if (node["Relation Name"]) out.push({ type: node["Node Type"], relation: node["Relation Name"] });
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

let h: EngineHarness;
let pcode: number;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, projects: 2, env: { APM_START: "8d" } });
  pcode = h.pcodes[0]!;
  // Months of older history, then the last 8 days.
  const old = NOW - 120 * DAY;
  const backfill = (from: number, to: number) => h.run({ command: "backfill", mode: { kind: "backfill", from, to }, streams: STREAMS });
  expect((await backfill(old, old + DAY)).exitCode).toBe(0);
  expect((await backfill(old + 40 * DAY, old + 41 * DAY)).exitCode).toBe(0);
  expect((await backfill(NOW - 8 * DAY, NOW - HOUR)).exitCode).toBe(0);
  await h.sql`ANALYZE`;
}, 300_000);

afterAll(async () => h?.close());

describe("the documented dashboard queries", () => {
  const queries = dashboardQueries();

  it("are the four docs/design.md shows", () => {
    expect(queries.map((q) => q.what)).toEqual([
      "top 5 services by total time, per day, for one project over the last 7 days",
      "top 10 services by total time over the last 2 days, all projects",
      "error rate by hour of one project over the last 2 days, and how much of each hour is fetched",
      "visitors per day of one project over the last 30 days",
    ]);
  });

  it.each(queries.map((q) => [q.what, q]))("%s: rows, the range's months only, from a rollup or by index", async (_what, q) => {
    const sql = forWarehouse(q, h.db.schema, pcode);
    const rows = await h.sql.unsafe(sql);
    expect(rows.length).toBeGreaterThan(0);
    const partitions = await h.sql<{ name: string }[]>`
      SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname IN ('rollup_stat_transaction_daily', 'rollup_stat_transaction_hourly', 'stat_transaction', 'visitors')`;
    const rangeStart = NOW - (sql.includes("30 days") ? 30 : 7) * DAY;
    // A partition of a month in range; rollup_coverage and rollup_marks are not partitioned
    // (they are read by their keys).
    const inRange = (name: string) => {
      const month = /_p(\d{4})_(\d{2})$/.exec(name);
      return month ? Date.UTC(Number(month[1]), Number(month[2]), 1) > rangeStart : ["rollup_coverage", "rollup_marks"].includes(name);
    };
    expect(partitions.filter((p) => !inRange(p.name)).length).toBeGreaterThan(0);
    await h.sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL enable_seqscan = off");
      const [plan] = await tx.unsafe<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
      const read = scans(plan!["QUERY PLAN"][0].Plan);
      expect(read.length).toBeGreaterThan(0);
      // Only partitions of the range's months.
      expect(read.filter((r) => !inRange(r.relation)).map((r) => r.relation)).toEqual([]);
      // A bucket's coverage is read only where the query selects it.
      expect(read.some((r) => r.relation === "rollup_coverage")).toBe(sql.includes("coverage"));
      // An index serves each read (a sequential scan is left only where none could).
      expect(read.filter((r) => r.type === "Seq Scan")).toEqual([]);
    });
  });

  it("a view reads rollup_coverage only for a query that selects coverage", async () => {
    const read = async (sql: string) => {
      const [plan] = await h.sql.unsafe<{ "QUERY PLAN": [{ Plan: PlanNode }] }[]>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
      return scans(plan!["QUERY PLAN"][0].Plan).some((r) => r.relation === "rollup_coverage");
    };
    const recent = `pcode = ${pcode} AND bucket_start >= now() - interval '7 days'`;
    expect(await read(`SELECT bucket_start, sum(count) FROM stat_transaction_daily WHERE ${recent} GROUP BY 1`)).toBe(false);
    expect(await read(`SELECT bucket_start, min(coverage) FROM stat_transaction_daily WHERE ${recent} GROUP BY 1`)).toBe(true);
    expect(await read(`SELECT bucket_start, sum(count) FROM stat_transaction_hourly WHERE ${recent} GROUP BY 1`)).toBe(false);
    expect(await read(`SELECT bucket_start, min(coverage) FROM stat_transaction_hourly WHERE ${recent} GROUP BY 1`)).toBe(true);
  });
});
