// A rollup refresh that fails after a run's windows are committed fails nothing
// (engine/refresh-rollups.ts): the run ends 0 with its data, a warning says the rollups wait, the
// marks stay and the views read their buckets from the raw rows; the next run refreshes them.
// The failure is a real one of the database: a trigger that refuses the refresh's coverage rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { rollupDiffs } from "../support/rollup-checks.ts";

const NOW = Date.UTC(2026, 2, 10, 0, 0);
const backfill = {
  command: "backfill",
  mode: { kind: "backfill", from: NOW - 3 * HOUR, to: NOW - HOUR },
  streams: ["stat.transaction"],
} as const;
let h: EngineHarness;

const marks = async () => (await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_marks`)[0]!.n;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 1, env: { APM_START: new Date(NOW - 3 * HOUR).toISOString() } });
});
afterAll(async () => h?.close());

describe("a rollup refresh that fails", () => {
  it("leaves the run done, its marks kept and the views exact, and says so", async () => {
    await h.sql.unsafe(`
      CREATE FUNCTION refuse_coverage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'coverage refused by the test'; END $$;
      CREATE TRIGGER refuse_coverage BEFORE INSERT ON rollup_coverage FOR EACH ROW EXECUTE FUNCTION refuse_coverage()`);
    const run = await h.run(backfill);
    expect(run.exitCode, h.logs.slice(-5).join("\n")).toBe(0);
    expect(h.logs.filter((l) => l.includes("rollups not refreshed") && l.includes("coverage refused by the test"))).toHaveLength(1);
    expect(await marks()).toBeGreaterThan(0);
    expect(await rollupDiffs(h.sql)).toEqual([]);
  });

  it("is made up by the next run's refresh", async () => {
    await h.sql.unsafe("DROP TRIGGER refuse_coverage ON rollup_coverage");
    const run = await h.run({ ...backfill, mode: { kind: "backfill", from: NOW - 2 * HOUR, to: NOW - HOUR } });
    expect(run.exitCode).toBe(0);
    expect(await marks()).toBe(0);
    expect(await rollupDiffs(h.sql, { table: true })).toEqual([]);
  });
});
