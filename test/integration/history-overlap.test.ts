// Versions of dimension rows when two runs overlap (issue 38): run A starts first and waits on its
// first answer (a gate proxy holds its connections; A holds the project list's lock meanwhile), run
// B runs whole and sees a revised agent and setting, then A captures the lists as they were.
// Whatever the two runs' clocks say, every `_history` table is left without inverted bounds and
// without two versions of a key at once, and the later capture holds the current version.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import type { JobResult } from "../../src/engine/run.ts";
import { type EngineHarness, runEngine, startEngineHarness } from "../support/engine-harness.ts";
import { type GateProxy, startGateProxy } from "../support/gate-proxy.ts";
import { waitFor } from "../support/wait-for.ts";

// Within one 5-minute cube the sandbox's lists do not change by themselves.
const T0 = Date.UTC(2026, 3, 14, 9, 30);
const [T1, T2, T3] = [T0 + 20_000, T0 + 40_000, T0 + 60_000];
// Every dimension stream: each has a `_history` table.
const STREAMS = OPERATIONS.filter((op) => op.stream?.kind === "dimension").map((op) => op.id);
const REVISED = ["project.agents", "project.event_settings"];

let h: EngineHarness;
let gate: GateProxy;
beforeEach(async () => {
  h = await startEngineHarness({ now: T0, projects: 1, burstKeys: 0 });
  gate = await startGateProxy(h.sandbox.url);
});
afterEach(async () => {
  await gate?.close();
  await h?.close();
});

const job = { command: "sync", mode: { kind: "sync" }, streams: STREAMS } as const;

/** A run through the gate with clock `now`, held at its first request (in a box: awaiting it is not awaiting the run). */
async function heldRun(now: () => number): Promise<{ run: Promise<JobResult> }> {
  const { sandbox } = h;
  const run = runEngine(
    { baseUrl: gate.url, projects: sandbox.projects, accountToken: sandbox.accountToken, database: h.db, now, logs: h.logs },
    job,
  );
  await waitFor("run A's first request at the gate", () => gate.connections() > 0);
  return { run };
}

/** B syncs whole at T2 (revised answers) while A waits; A then captures the unrevised lists. */
async function overlap(clockOfA: () => number): Promise<void> {
  h.setNow(T0);
  expect((await h.run(job)).exitCode).toBe(0);
  h.setNow(T1);
  const a = await heldRun(clockOfA);
  h.setNow(T2);
  h.sandbox.setHostile({ modes: ["restate"], ops: REVISED });
  expect((await h.run(job)).exitCode).toBe(0);
  // The runs did overlap: B found the list A was fetching locked.
  expect(h.logs.some((l) => l.includes("account.projects") && l.includes("another run is writing this stream now"))).toBe(true);
  h.sandbox.setHostile({ modes: [], ops: [] });
  h.setNow(T3);
  gate.open();
  expect((await a.run).exitCode, h.logs.join("\n")).toBe(0);
}

describe("two overlapping runs", () => {
  it("with one clock: the versions follow the captures' own times, B's then A's", async () => {
    await overlap(h.now);
    expect(await violations()).toEqual([]);
    expect(await revisedVersions("agents_history", "oname")).toEqual([
      [T0, T2],
      [T2, T3],
      [T3, null],
    ]);
    expect(await revisedVersions("event_settings_history", "setting_id")).toEqual([
      [T0, T2],
      [T2, T3],
      [T3, null],
    ]);
  });

  it("with A's clock behind B's (another host): A's versions start just after B's, none inverted or overlapping", async () => {
    await overlap(() => T1);
    expect(await violations()).toEqual([]);
    for (const [table, key] of [
      ["agents_history", "oname"],
      ["event_settings_history", "setting_id"],
    ] as const)
      expect(await revisedVersions(table, key)).toEqual([
        [T0, T2],
        [T2, T2 + 1],
        [T2 + 1, null],
      ]);
  });
});

/** Every `_history` table's versions that end before they start, and pairs of one key that overlap. */
async function violations(): Promise<string[]> {
  const tables = await h.sql<{ name: string }[]>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_name LIKE '%\_history' ORDER BY 1`;
  expect(tables.length).toBe(8);
  const found: string[] = [];
  let versions = 0;
  for (const { name } of tables) {
    const key = await h.sql<{ column: string }[]>`
      SELECT k.column_name AS column FROM information_schema.table_constraints c
      JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
      WHERE c.table_schema = current_schema() AND c.table_name = ${name} AND c.constraint_type = 'PRIMARY KEY'
        AND k.column_name <> 'valid_from'`;
    expect(key.length).toBeGreaterThan(0);
    const sameKey = key.map((k) => h.sql`a.${h.sql(k.column)} = b.${h.sql(k.column)}`).reduce((x, y) => h.sql`${x} AND ${y}`);
    const [counts] = await h.sql<{ versions: number; inverted: number; overlapping: number }[]>`
      SELECT (SELECT count(*)::int FROM ${h.sql(name)}) AS versions,
        (SELECT count(*)::int FROM ${h.sql(name)} WHERE valid_to <= valid_from) AS inverted,
        (SELECT count(*)::int FROM ${h.sql(name)} a JOIN ${h.sql(name)} b ON ${sameKey} AND a.valid_from < b.valid_from
          WHERE coalesce(a.valid_to, 'infinity') > b.valid_from) AS overlapping`;
    versions += counts!.versions;
    if (counts!.inverted > 0) found.push(`${name}: ${counts!.inverted} version(s) with valid_to <= valid_from`);
    if (counts!.overlapping > 0) found.push(`${name}: ${counts!.overlapping} overlapping pair(s)`);
  }
  expect(versions).toBeGreaterThan(0);
  return found;
}

/** [valid_from, valid_to] of the one key of `table` the revision changed, in order. */
async function revisedVersions(table: string, key: string): Promise<[number, number | null][]> {
  const rows = await h.sql<{ key: string; from: Date; to: Date | null }[]>`
    SELECT ${h.sql(key)}::text AS key, valid_from AS from, valid_to AS to FROM ${h.sql(table)}
    WHERE ${h.sql(key)} IN (SELECT ${h.sql(key)} FROM ${h.sql(table)} GROUP BY 1 HAVING count(*) > 1) ORDER BY 1, 2`;
  expect(new Set(rows.map((r) => r.key)).size).toBe(1);
  return rows.map((r) => [r.from.getTime(), r.to?.getTime() ?? null]);
}
