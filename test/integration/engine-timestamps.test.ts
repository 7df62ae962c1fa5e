// A server's timestamps cannot shape the warehouse (issue 31 item 6): points dated outside the
// window asked for (epoch seconds read as ms, 9999-12-31, the last instant a Date holds, 600
// months back) are quarantined with their reason, the window's other points are kept and the
// window is done; partitions are made for the window's own months only.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { DAY, HOUR, ledgerRows, runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";

const NOW = Date.UTC(2026, 3, 7, 15, 2);
const PCODE = 77;
const MONTH = 30 * DAY;

/** The stray times of one window's answer, beside its two good points. */
function stray(stime: number): number[] {
  const months = Array.from({ length: 600 }, (_, i) => stime - (i + 2) * MONTH);
  return [Math.floor(stime / 1000), Date.UTC(9999, 11, 31), 8.64e15, stime + 40 * DAY, ...months];
}

const answer = (req: RecordedRequest, res: ServerResponse) => {
  const m = /\/apdex\/(\d+)\/(\d+)/.exec(req.url ?? "");
  if (!m) return reply(res, 404, '{"msg":"not here"}');
  const [stime, etime] = [Number(m[1]), Number(m[2])];
  const good = [stime, stime + 5 * 60_000];
  const series = [...good, ...stray(stime)].map((ts, i) => [ts, i]);
  reply(res, 200, JSON.stringify({ pcode: PCODE, type: "apdex", stime, etime, interval: 300, objects: [{ oid: 1, oname: "a", series }] }));
};

describe("points dated outside the window asked for", () => {
  const sd = useServerAndDatabase(answer);

  it("are quarantined with the reason; the good points are kept, the window done, no partition made for them", async () => {
    const { db, server } = sd;
    const partitions = async () =>
      (
        await db.sql<{ n: number }[]>`
          select count(*)::int as n from pg_inherits i join pg_class p on p.oid = i.inhparent
          join pg_namespace ns on ns.oid = p.relnamespace
          where p.relname = 'metric_points' and ns.nspname = ${db.schema}`
      )[0]!.n;
    const logs: string[] = [];
    const result = await runEngine(
      {
        baseUrl: server.url,
        projects: [{ pcode: PCODE, token: "ts-token-1" }],
        database: db,
        logs,
        now: () => NOW,
        env: { APM_START: new Date(NOW - 2 * HOUR).toISOString() },
      },
      { command: "sync", mode: { kind: "sync" }, streams: ["series.apdex"] },
    );
    expect(result.exitCode, logs.join("\n")).toBe(0);
    const ledger = await ledgerRows(db.sql);
    expect(ledger.length).toBeGreaterThan(0);
    expect(ledger.every((l) => l.status === "done")).toBe(true);
    const windows = ledger.length;
    const [kept] = await db.sql<{ n: number; min: Date; max: Date }[]>`
      select count(*)::int as n, min(ts) as min, max(ts) as max from metric_points where pcode = ${PCODE}`;
    expect(kept!.n).toBe(2 * windows);
    const first = Math.min(...ledger.map((l) => l.start));
    const last = Math.max(...ledger.map((l) => l.end));
    expect(kept!.min.getTime()).toBeGreaterThanOrEqual(first);
    expect(kept!.max.getTime()).toBeLessThan(last);
    const reasons = await db.sql<{ reason: string }[]>`select reason from quarantine where stream = 'series.apdex' and pcode = ${PCODE}`;
    expect(reasons).toHaveLength(stray(0).length * windows);
    for (const { reason } of reasons)
      expect(reason).toMatch(/^ts .+ lies outside the window asked for \(kept from .+ to .+\); not stored$/);
    // The window's own months: one or two (a window across a month's end), never one per stray month.
    expect(await partitions()).toBeLessThanOrEqual(2);
  });
});
