// The example queries of docs/history.md, read from the page and run as printed against a warehouse
// synced from the sandbox, whose `restate` mode revises an agent and a setting between two syncs,
// and a statistics hour between two fetches: each finds what its question asks for. The syncs run two days before the real clock, so that the
// queries relative to now() ("last week") see them; the March query is run for that month.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.ts";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";

const PAGE = readFileSync(join(packageRoot(), "docs", "history.md"), "utf8");

/** The first ```sql block after the heading `title`. */
function queryUnder(title: string): string {
  const at = PAGE.indexOf(title);
  expect(at, title).toBeGreaterThan(-1);
  const sql = /```sql\n([\s\S]*?)```/.exec(PAGE.slice(at))?.[1];
  expect(sql, title).toBeDefined();
  return sql!;
}

const CUBE = 5 * 60_000;
const T1 = Math.floor((Date.now() - 2 * 86_400_000) / CUBE) * CUBE;
const STREAMS = ["account.projects", "account.project_members", "project.agents", "project.event_settings"];

describe("docs/history.md queries on a synced warehouse", () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: T1, projects: 1, burstKeys: 0 });
    expect(h.pcodes[0]).toBe(1001);
    const sync = async (at: number) => {
      h.setNow(at);
      expect((await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS })).exitCode).toBe(0);
    };
    await sync(T1);
    h.sandbox.setHostile({ modes: ["restate"], ops: ["project.agents", "project.event_settings"] });
    await sync(T1 + 60_000);
  }, 60_000);
  afterAll(async () => h?.close());

  it("When did someone change this alert threshold?", async () => {
    const rows = await h.sql.unsafe(queryUnder("When did someone change this alert threshold?"));
    expect(rows.map((r) => ({ ...r }))).toEqual([
      {
        changed_at: new Date(T1 + 60_000),
        display_name: "Active Transaction",
        warning_before: "active_tx_count > 100",
        warning_threshold: "active_tx_count > 110",
        critical_before: "",
        critical_threshold: "",
      },
    ]);
  });

  it("Which agents went inactive last week?", async () => {
    const rows = await h.sql.unsafe(queryUnder("Which agents went inactive last week?"));
    const [inactive] = await h.sql<{ oname: string }[]>`SELECT oname FROM agents WHERE NOT active`;
    expect(rows.map((r) => [r.oname, (r.inactive_since as Date).getTime(), r.still_inactive])).toEqual([
      [inactive!.oname, T1 + 60_000, true],
    ]);
  });

  it("Who was on the project in March?", async () => {
    const month = new Date(T1);
    const [from, to] = [Date.UTC(month.getUTCFullYear(), month.getUTCMonth()), Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1)];
    const text = queryUnder("Who was on the project in March?")
      .replace("2026-04-01 00:00Z", new Date(to).toISOString())
      .replace("2026-03-01 00:00Z", new Date(from).toISOString());
    const rows = await h.sql.unsafe(text);
    const members = await h.sql<{ email: string }[]>`SELECT email FROM project_members WHERE pcode = 1001 ORDER BY email`;
    expect(members.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.email)).toEqual(members.map((m) => m.email));
    expect(rows.every((r) => (r.member_from as Date).getTime() === T1)).toBe(true);
  });

  it("Which hours did the server restate in the last day, and by how much?", async () => {
    const query = queryUnder("Which hours did the server restate");
    await expect(h.sql.unsafe(query)).resolves.toEqual([]);
    // An hour fetched, then fetched again from a server that revised it: one count more.
    const hour = Math.floor(T1 / 3_600_000) * 3_600_000 - 2 * 3_600_000;
    const backfill = async () => {
      const mode = { kind: "backfill", from: hour, to: hour + 3_600_000, onlyMissing: false } as const;
      expect((await h.run({ command: "backfill", mode, streams: ["stat.transaction"] })).exitCode).toBe(0);
    };
    await backfill();
    h.sandbox.setHostile({ modes: ["restate"], ops: ["stat.transaction"] });
    await backfill();
    const rows = await h.sql.unsafe(query);
    expect(rows.map((r) => [r.stream, r.pcode, (r.window_start as Date).getTime(), r.measure, r.measure_change])).toEqual([
      ["stat.transaction", "1001", hour, "count", 1],
    ]);
  });
});
