// What the warehouse remembers of change, against the sandbox whose `restate` mode revises its
// answers between runs: a dimension row that changed has two versions meeting at the capture
// that saw the change, an unchanged sync adds none; a statistics hour answered differently when
// fetched again is one restatement with its counts before and after, an unchanged re-fetch none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR, MINUTE } from "../../src/catalogue/types.ts";
import { formatStatus } from "../../src/report/format-status.ts";
import { makeReport } from "../../src/report/make-report.ts";
import { readRestatements } from "../../src/report/reads/readRestatements.ts";
import { readStatus } from "../../src/report/reads/readStatus.ts";
import { renderHtml } from "../../src/report/render-html.ts";
import { statusModel } from "../../src/report/status-model.ts";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 3, 14, 9, 30);

describe("versions of dimension rows", () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
  });
  afterAll(async () => h?.close());

  const sync = async (at: number) => {
    h.setNow(at);
    const run = await h.run({ command: "sync", mode: { kind: "sync" }, streams: ["project.agents", "project.event_settings"] });
    expect(run.exitCode).toBe(0);
  };
  const versions = (table: string) =>
    h.sql<{ key: string; from: Date; to: Date | null; content: string }[]>`
      SELECT ${h.sql(table)}::text AS content, valid_from AS from, valid_to AS to,
        ${table === "agents_history" ? h.sql`oname` : h.sql`setting_id`} AS key
      FROM ${h.sql(table)} ORDER BY 4, valid_from`;

  it("opens a version where content changed, closes the one before at that capture, and adds none when nothing did", async () => {
    // Within one 5-minute cube the sandbox's agent list does not change by itself.
    const [t1, t2, t3, t4] = [NOW, NOW + 60_000, NOW + 120_000, NOW + 180_000];
    await sync(t1);
    const agents = await versions("agents_history");
    const settings = await versions("event_settings_history");
    expect(agents.length).toBeGreaterThan(3);
    expect(agents.every((v) => v.from.getTime() === t1 && v.to === null)).toBe(true);
    const [live] = await h.sql<{ agents: number; settings: number }[]>`
      SELECT (SELECT count(*)::int FROM agents) AS agents, (SELECT count(*)::int FROM event_settings) AS settings`;
    expect([agents.length, settings.length]).toEqual([live!.agents, live!.settings]);

    await sync(t2);
    expect(await versions("agents_history")).toEqual(agents);
    expect(await versions("event_settings_history")).toEqual(settings);

    // The server revises: its first agent went inactive, its first BASIC setting's threshold rose.
    h.sandbox.setHostile({ modes: ["restate"], ops: ["project.agents", "project.event_settings"] });
    await sync(t3);
    const changedAgent = await changed("agents_history", "oname");
    expect(changedAgent.map((v) => [v.from.getTime(), v.to?.getTime() ?? null])).toEqual([
      [t1, t3],
      [t3, null],
    ]);
    const [agentNow] = await h.sql<{ active: boolean }[]>`SELECT active FROM agents WHERE oname = ${changedAgent[0]!.key}`;
    expect(agentNow!.active).toBe(false);
    const changedSetting = await changed("event_settings_history", "setting_id");
    expect(changedSetting.map((v) => [v.from.getTime(), v.to?.getTime() ?? null])).toEqual([
      [t1, t3],
      [t3, null],
    ]);
    const thresholds = await h.sql<{ warning_threshold: string }[]>`
      SELECT warning_threshold FROM event_settings_history WHERE setting_id = ${changedSetting[0]!.key} ORDER BY valid_from`;
    expect(thresholds.map((t) => t.warning_threshold)).toEqual(["active_tx_count > 100", "active_tx_count > 110"]);

    // The same revised answer again: nothing to add.
    const before = [await versions("agents_history"), await versions("event_settings_history")];
    await sync(t4);
    expect([await versions("agents_history"), await versions("event_settings_history")]).toEqual(before);
  });

  /** The versions of the one key of `table` that has more than one. */
  async function changed(table: string, key: string) {
    const rows = await h.sql<{ key: string; from: Date; to: Date | null }[]>`
      SELECT ${h.sql(key)} AS key, valid_from AS from, valid_to AS to FROM ${h.sql(table)}
      WHERE ${h.sql(key)} IN (SELECT ${h.sql(key)} FROM ${h.sql(table)} GROUP BY 1 HAVING count(*) > 1) ORDER BY 1, 2`;
    expect(new Set(rows.map((r) => r.key)).size).toBe(1);
    return rows;
  }
});

describe("restatements", () => {
  const DAY0 = Date.UTC(2026, 3, 14);
  const HOUR_AT = DAY0 + 2 * HOUR;
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: DAY0 + DAY - HOUR, projects: 1, burstKeys: 0 });
  });
  afterAll(async () => h?.close());

  const refetch = async () => {
    const mode = { kind: "backfill", from: HOUR_AT, to: HOUR_AT + HOUR, onlyMissing: false } as const;
    const run = await h.run({ command: "backfill", mode, streams: ["stat.transaction"] });
    expect(run.exitCode).toBe(0);
  };
  const restatements = () =>
    h.sql<
      { stream: string; start: Date; end: Date; rows_before: string; rows_after: string; before: number; after: number; measure: string }[]
    >`
      SELECT stream, window_start AS start, window_end AS end, rows_before::text, rows_after::text,
        measure_before AS before, measure_after AS after, measure FROM restatements ORDER BY id`;

  it("records one restatement with both sums when a stored hour comes back different, none when it comes back the same", async () => {
    const pcode = h.pcodes[0]!;
    const truth = h.truth.totalCount(pcode, "stat.transaction", HOUR_AT, HOUR_AT + HOUR);
    const rows = h.truth.records(pcode, "stat.transaction", HOUR_AT, HOUR_AT + HOUR).length;
    const stored = async () =>
      (
        await h.sql<{ n: number; rows: number }[]>`
        SELECT sum(count)::float8 AS n, count(*)::int AS rows FROM stat_transaction WHERE pcode = ${pcode}`
      )[0];

    await refetch();
    expect(await restatements()).toEqual([]);
    // The same answer again: stored before, nothing differs; the rows are the server's, as before.
    await refetch();
    expect(await restatements()).toEqual([]);
    expect(await stored()).toEqual({ n: truth, rows });

    h.sandbox.setHostile({ modes: ["restate"], ops: ["stat.transaction"] });
    await refetch();
    const [r, ...more] = await restatements();
    expect(more).toEqual([]);
    expect(r).toEqual({
      stream: "stat.transaction",
      start: new Date(HOUR_AT),
      end: new Date(HOUR_AT + HOUR),
      rows_before: String(rows),
      rows_after: String(rows),
      before: truth,
      after: truth + 1,
      measure: "count",
    });
    expect((await stored())!.n).toBe(truth + 1);

    // The revised answer again: the same rows, no second restatement.
    await refetch();
    expect(await restatements()).toHaveLength(1);

    // status and the report show it.
    const model = statusModel(await readStatus(h.sql, h.now()), [], null, await readRestatements(h.sql, 10));
    expect(formatStatus(model)).toContain(
      `restated windows: 1 (fetched again, the server answered differently):\n  project ${pcode} stat.transaction: 2026-04-14 02:00Z .. 2026-04-14 03:00Z: rows ${rows} -> ${rows}, count ${truth} -> ${truth + 1}`,
    );
    const report = await makeReport(h.sql, { from: null, to: null, projects: [pcode], now: h.now(), settleMs: 0 });
    expect(report.totals.restatements).toBe(1);
    expect(report.restatements[0]).toMatchObject({ stream: "stat.transaction", pcode, measureBefore: truth, measureAfter: truth + 1 });
    expect(await renderHtml(report)).toContain(`count ${truth} → ${truth + 1}`);
    const elsewhere = await makeReport(h.sql, { from: null, to: null, projects: [pcode + 1], now: h.now(), settleMs: 0 });
    expect(elsewhere.totals.restatements).toBe(0);
    // The report's range selects by the window's start: the restated hour, and the hour after it.
    const inRange = await makeReport(h.sql, { from: HOUR_AT, to: HOUR_AT + HOUR, projects: null, now: h.now(), settleMs: 0 });
    expect(inRange.totals.restatements).toBe(1);
    const later = await makeReport(h.sql, { from: HOUR_AT + HOUR, to: HOUR_AT + 2 * HOUR, projects: null, now: h.now(), settleMs: 0 });
    expect(later.totals.restatements).toBe(0);
  });

  it("compares a window whose ledger rows were forgotten with the rows it kept", async () => {
    // What `reset` without --drop-rows leaves: the hour's rows (the revised answer), no ledger.
    await h.sql`DELETE FROM sync_windows WHERE stream = 'stat.transaction'`;
    const pcode = h.pcodes[0]!;
    const truth = h.truth.totalCount(pcode, "stat.transaction", HOUR_AT, HOUR_AT + HOUR);
    // The server answers as it did first again.
    h.sandbox.setHostile(null);
    await refetch();
    const all = await restatements();
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ start: new Date(HOUR_AT), before: truth + 1, after: truth });
  });
});

describe("restatements of incremental syncs", () => {
  // 09:47: the first sync ends at 09:35 (settle), its last window short: [09:00, 09:35).
  const NOW_AT = Date.UTC(2026, 3, 14, 9, 47);
  const STREAMS = ["stat.transaction", "range.sql"];
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW_AT, projects: 1, burstKeys: 0, env: { APM_START: new Date(NOW_AT - 3 * HOUR).toISOString() } });
  });
  afterAll(async () => h?.close());

  const sync = async (at: number) => {
    h.setNow(at);
    expect((await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS })).exitCode).toBe(0);
  };
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const fetchedBy = async (run: number) =>
    (
      await h.sql<{ start: Date; end: Date }[]>`
        SELECT window_start AS start, window_end AS end FROM sync_windows WHERE stream = 'stat.transaction' AND run_id = ${run} ORDER BY 1`
    ).map((w) => `${hhmm(w.start)}-${hhmm(w.end)}`);
  const restated = async () =>
    (
      await h.sql<{ stream: string; start: Date; end: Date }[]>`
      SELECT stream, window_start AS start, window_end AS end FROM restatements ORDER BY stream, window_start`
    ).map((r) => `${r.stream} ${hhmm(r.start)}-${hhmm(r.end)}`);

  it("a short last window fetched whole by the next run is a completion, not a restatement; a stored whole window the server revised is one", async () => {
    await sync(NOW_AT);
    // 10:17, the same server: its lookback fetches 08:00-09:00 again, and 09:00-10:00 whole.
    await sync(NOW_AT + 30 * MINUTE);
    expect(await fetchedBy(2)).toEqual(["08:00-09:00", "09:00-10:00", "10:00-10:05"]);
    expect(await restated()).toEqual([]);
    // 10:47, the server revised its data: 09:00-10:00, stored whole, is restated; 10:00-10:05 grows to 10:35.
    h.sandbox.setHostile({ modes: ["restate"], ops: STREAMS });
    await sync(NOW_AT + 60 * MINUTE);
    expect(await fetchedBy(3)).toEqual(["09:00-10:00", "10:00-10:35"]);
    expect(await restated()).toEqual(["range.sql 09:00-10:00", "stat.transaction 09:00-10:00"]);
  });
});
