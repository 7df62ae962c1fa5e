// A page that repeats a natural key (two records for one service in one window) must not fail
// the window on every run: the first record is stored, the repeat goes to quarantine with why.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { HOUR, ledgerRows, runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";

const PCODE = 77;
const H0 = Date.UTC(2026, 4, 1, 6);
const NOW = H0 + 5 * HOUR;

const record = (serviceHash: number, service: string, count: number) => ({
  serviceHash,
  service,
  count,
  error: 0,
  timeSum: count * 10,
  timeMin: 1,
  timeMax: 20,
  timeAvg: 10,
});

function answer(req: RecordedRequest, res: ServerResponse) {
  const body = JSON.parse(req.body || "{}") as { stime?: number; etime?: number };
  if (req.url === "/open/api/v2/stat/transaction") {
    const data = [record(-5, "/a", 4), record(9, "/b", 2), record(-5, "/a (again)", 7)];
    return reply(res, 200, JSON.stringify({ stime: body.stime, etime: body.etime, timestamp: NOW, data, total: 3, retrievedTotal: 3 }));
  }
  return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
}

describe("a repeated natural key in one window", () => {
  const sd = useServerAndDatabase(answer);

  it("stores the first record, quarantines the repeat, and the window is done (twice: no duplicates)", async () => {
    const { server, db } = sd;
    for (let i = 0; i < 2; i++) {
      const result = await runEngine(
        { baseUrl: server.url, projects: [{ pcode: PCODE, token: "dup-token-1" }], database: db, now: () => NOW },
        { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOUR }, streams: ["stat.transaction"] },
      );
      expect(result.exitCode).toBe(0);
      expect(result.streams.get("stat.transaction")).toMatchObject({ rows: 2, quarantined: 1, failed: 0 });
    }
    const rows = await db.sql<{ service_hash: string; service: string; count: string }[]>`
      SELECT service_hash::text, service, count::text FROM stat_transaction ORDER BY service_hash`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { service_hash: "-5", service: "/a", count: "4" },
      { service_hash: "9", service: "/b", count: "2" },
    ]);
    const q = await db.sql<{ reason: string; raw: { service: string; count: number } }[]>`SELECT reason, raw FROM quarantine`;
    expect(q).toHaveLength(1);
    expect(q[0]!.reason).toContain("duplicate record: same service_hash");
    expect(q[0]!.raw).toMatchObject({ service: "/a (again)", count: 7 });
    const [ledger] = await ledgerRows(db.sql, { stream: "stat.transaction" });
    expect(ledger).toMatchObject({ status: "done", rowsFetched: 3, rowsWritten: 2 });
  });
});
