// A page that repeats a natural key (two records for one service in one window) must not fail
// the window on every run: the first record is stored, the repeat goes to quarantine with why.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { HOUR, ledgerRows, runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";
import { transactionRecord } from "../support/stat-records.ts";

const PCODE = 77;
const H0 = Date.UTC(2026, 4, 1, 6);
const NOW = H0 + 5 * HOUR;

function answer(req: RecordedRequest, res: ServerResponse) {
  const body = JSON.parse(req.body || "{}") as { stime?: number; etime?: number };
  if (req.url === "/open/api/v2/stat/transaction") {
    const data = [transactionRecord(-5, "/a", 4), transactionRecord(9, "/b", 2), transactionRecord(-5, "/a (again)", 7)];
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

// A batch keeps the texts of its keys only from its first repeated hash on: a repeat of a key first
// seen after that one must be found too.
function repeatsAnswer(req: RecordedRequest, res: ServerResponse) {
  const body = JSON.parse(req.body || "{}") as { stime?: number; etime?: number };
  if (req.url !== "/open/api/v2/stat/transaction") return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
  const data = [
    transactionRecord(1, "/a", 1),
    transactionRecord(1, "/a (again)", 2),
    transactionRecord(2, "/b", 3),
    transactionRecord(2, "/b (again)", 4),
    transactionRecord(3, "/c", 5),
  ];
  return reply(res, 200, JSON.stringify({ stime: body.stime, etime: body.etime, timestamp: NOW, data, total: 5, retrievedTotal: 5 }));
}

describe("repeats of keys before and after the batch's first repeat", () => {
  const sd = useServerAndDatabase(repeatsAnswer);

  it("stores each first record and quarantines both repeats", async () => {
    const { server, db } = sd;
    const result = await runEngine(
      { baseUrl: server.url, projects: [{ pcode: PCODE, token: "dup-token-3" }], database: db, now: () => NOW },
      { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOUR }, streams: ["stat.transaction"] },
    );
    expect(result.exitCode).toBe(0);
    expect(result.streams.get("stat.transaction")).toMatchObject({ rows: 3, quarantined: 2, failed: 0 });
    const rows = await db.sql<{ service: string }[]>`SELECT service FROM stat_transaction ORDER BY service_hash`;
    expect(rows.map((r) => r.service)).toEqual(["/a", "/b", "/c"]);
    const q = await db.sql<{ raw: { service: string } }[]>`SELECT raw FROM quarantine ORDER BY id`;
    expect(q.map((r) => r.raw.service)).toEqual(["/a (again)", "/b (again)"]);
  });
});

// Pages are parsed a batch at a time (64 KiB) and a batch's rows are held for one COPY with the
// next ones: a repeat whose first record is in an earlier batch is still found, though that row
// may not have reached the table yet when the repeat is checked.
const BIG = 800;
const longName = (i: number) => `/service/${String(i).padStart(4, "0")}/${"x".repeat(60)}`;

function bigAnswer(req: RecordedRequest, res: ServerResponse) {
  const body = JSON.parse(req.body || "{}") as { stime?: number; etime?: number };
  if (req.url !== "/open/api/v2/stat/transaction") return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
  const data = Array.from({ length: BIG }, (_, i) => transactionRecord(i + 1, longName(i), 1));
  data.push(transactionRecord(1, "/repeat of the first", 99));
  return reply(
    res,
    200,
    JSON.stringify({ stime: body.stime, etime: body.etime, timestamp: NOW, data, total: data.length, retrievedTotal: data.length }),
  );
}

describe("a repeated natural key in a later parse batch of a big page", () => {
  const sd = useServerAndDatabase(bigAnswer);

  it("stores the first record and quarantines the repeat (the page is several batches)", async () => {
    const { server, db } = sd;
    expect(JSON.stringify(Array.from({ length: BIG }, (_, i) => transactionRecord(i + 1, longName(i), 1))).length).toBeGreaterThan(
      64 * 1024,
    );
    const result = await runEngine(
      { baseUrl: server.url, projects: [{ pcode: PCODE, token: "dup-token-2" }], database: db, now: () => NOW },
      { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOUR }, streams: ["stat.transaction"] },
    );
    expect(result.exitCode).toBe(0);
    expect(result.streams.get("stat.transaction")).toMatchObject({ rows: BIG, quarantined: 1, failed: 0 });
    const [first] = await db.sql<{ service: string; count: string; n: string }[]>`
      SELECT min(service) FILTER (WHERE service_hash = 1) AS service, sum(count)::text AS count, count(*)::text AS n FROM stat_transaction`;
    expect({ ...first }).toEqual({ service: longName(0), count: String(BIG), n: String(BIG) });
    const q = await db.sql<{ reason: string; raw: { service: string } }[]>`SELECT reason, raw FROM quarantine`;
    expect(q.map((r) => r.raw.service)).toEqual(["/repeat of the first"]);
  });
});
