// How a refreshed day reads its raw rows (db/rollups/refresh-day.ts): by a bitmap scan, each of the
// day's heap pages once, where the planner's own choice, an index scan, visited the heap in the
// key's order a row at a time. The coverage's lookups of a few ledger rows each come after, with
// index scans allowed again. Seen through the refresh's own transaction: each statement it sends is
// explained first, with the settings it runs under.
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Canceller, refreshDay } from "../../src/db/rollups/refresh-day.ts";
import { rollupOf } from "../../src/db/rollups/spec.ts";
import { rollupWriter } from "../../src/db/views.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { markRollupHours, rollupDiffs } from "../support/rollup-checks.ts";

const FROM = Date.UTC(2026, 4, 4);
const TO = FROM + 3 * DAY;
const DAY_REFRESHED = FROM + DAY;

let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ now: TO + HOUR, burstKeys: 0, projects: 1, env: { APM_REFRESH_ALONG: "0" } });
  const r = await h.run({ command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: ["stat.sql"] });
  expect(r.exitCode).toBe(0);
  // The statistics the server keeps of a table in use (autovacuum's): without them the planner
  // guesses, and its guess for a small table is a bitmap scan already.
  await h.sql`ANALYZE stat_sql`;
}, 180_000);
afterAll(async () => h?.close());

interface Sent {
  readonly text: string;
  readonly indexScans: string;
  readonly plan: string;
}

/** Refreshes one marked day of `stat_sql` through refreshDay, each INSERT or DELETE it sends explained first. */
async function refreshExplained(): Promise<Sent[]> {
  const table = "stat_sql";
  await markRollupHours(h.sql, { table, stream: "stat.sql", pcode: h.pcodes[0]!, fromMs: DAY_REFRESHED, toMs: DAY_REFRESHED + DAY });
  const sent: Sent[] = [];
  const cancel = new Canceller(h.sql, undefined);
  await h.sql.begin(async (tx) => {
    const seen = new Proxy(tx, {
      get(target, key) {
        if (key !== "unsafe") return Reflect.get(target, key);
        return async (text: string, params: never[] = []) => {
          if (/^\s*(INSERT|DELETE)/.test(text)) {
            const [setting] = await target.unsafe<{ v: string }[]>(`SELECT current_setting('enable_indexscan') AS v`);
            const plan = await target.unsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${text}`, params);
            sent.push({ text, indexScans: setting!.v, plan: plan.map((r) => r["QUERY PLAN"]).join("\n") });
          }
          return target.unsafe(text, params);
        };
      },
    }) as postgres.TransactionSql;
    const n = await refreshDay(
      seen,
      rollupOf(table)!,
      rollupWriter(table),
      { start: new Date(DAY_REFRESHED), pcodes: [String(h.pcodes[0])] },
      cancel,
    );
    expect(n).toBe(24);
  });
  await cancel.dispose();
  return sent;
}

describe("a refreshed day's reads", () => {
  it("reads the day's raw rows by a bitmap scan, and the ledger for the coverage with index scans allowed", async () => {
    const sent = await refreshExplained();
    const fromRaw = sent.filter((s) => /^\s*INSERT INTO "rollup_stat_sql_/.test(s.text));
    const coverage = sent.filter((s) => /^\s*INSERT INTO "rollup_coverage"/.test(s.text));
    expect(fromRaw.length).toBeGreaterThan(0);
    expect(coverage.length).toBeGreaterThan(0);
    for (const s of fromRaw) {
      expect(s.indexScans).toBe("off");
      expect(s.plan).toMatch(/Bitmap Heap Scan on stat_sql_p/);
      expect(s.plan).not.toMatch(/Index (Only )?Scan using \S+ on stat_sql_p/);
    }
    for (const s of coverage) expect(s.indexScans).toBe("on");
    // The raw statements all come before the coverage's.
    expect(sent.findIndex((s) => coverage.includes(s))).toBeGreaterThan(sent.findLastIndex((s) => fromRaw.includes(s)));
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  });
});
