// Payload quirks end to end (issue 4, docs/api-notes.md "Payload quirks"): numbers sent as
// strings are stored typed; a field the schema does not know lands in `extra`; a broken record
// lands in `quarantine` with its reason while the rest of its page is written.
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type EngineHarness, HOUR, ledgerRows, runEngine, sandboxGet, startEngineHarness } from "../support/engine-harness.ts";
import { type RecordedRequest, reply, startServer, type TestServer } from "../support/http-server.ts";

const NOW = Date.UTC(2026, 0, 10, 9, 17);
const H0 = Date.UTC(2026, 0, 10, 6);

describe("numbers as strings (sandbox)", () => {
  let h: EngineHarness;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2, env: { APM_START: new Date(H0).toISOString() } });
    const r = await h.run({
      command: "sync",
      mode: { kind: "sync" },
      streams: ["project.spot", "range.heap_use.avg", "range.httpc", "range.sql", "project.event_history"],
    });
    expect(r.exitCode).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it("spot values (all strings) are doubles equal to the sent text", async () => {
    const pcode = h.pcodes[1]!;
    const raw = (await sandboxGet(h.sandbox, pcode, "/open/api/json/spot")) as Record<string, unknown>;
    const [row] = await h.sql<Record<string, unknown>[]>`SELECT * FROM spot_values WHERE pcode = ${pcode}`;
    const [types] = await h.sql<{ cpu: string; tps: string }[]>`
      SELECT pg_typeof(cpu)::text AS cpu, pg_typeof(tps)::text AS tps FROM spot_values LIMIT 1`;
    expect(types).toEqual({ cpu: "double precision", tps: "double precision" });
    for (const field of ["cpu", "tps", "dbconn_total", "apdex", "act_agent"]) {
      expect(typeof raw[field]).toBe("string");
      expect({ field, value: row![field] }).toEqual({ field, value: Number(raw[field]) });
    }
  });

  it("heap_use, httpc Stdev and sql time_std (strings) are stored as doubles", async () => {
    const pcode = h.pcodes[0]!;
    const heap = (await sandboxGet(h.sandbox, pcode, `/open/api/json/heap_use/${H0}/${H0 + HOUR}/avg`)) as {
      data: { oid: number; heap_use: unknown }[];
    };
    const httpc = (await sandboxGet(h.sandbox, pcode, `/open/api/json/httpc/${H0}/${H0 + HOUR}`)) as {
      records: { UrlHash: number; HostHash: number; Port: number; Stdev: unknown }[];
    };
    const sql = (await sandboxGet(h.sandbox, pcode, `/open/api/json/sql/${H0}/${H0 + HOUR}`)) as {
      records: { hash: number; dbcHash: number; time_std: unknown }[];
    };
    const window = { s: new Date(H0), e: new Date(H0 + HOUR) };
    const heapRows = await h.sql<{ oid: string; v: number; t: string }[]>`
      SELECT oid::text, heap_use AS v, pg_typeof(heap_use)::text AS t FROM heap_use
      WHERE pcode = ${pcode} AND window_start = ${window.s} AND window_end = ${window.e}`;
    expect(heapRows.length).toBe(heap.data.length);
    for (const r of heap.data) {
      expect(typeof r.heap_use).toBe("string");
      expect(heapRows.find((x) => x.oid === String(r.oid))).toEqual({ oid: String(r.oid), v: Number(r.heap_use), t: "double precision" });
    }
    const httpcRows = await h.sql<{ k: string; v: number }[]>`
      SELECT url_hash || '|' || host_hash || '|' || port AS k, stdev AS v FROM range_httpc
      WHERE pcode = ${pcode} AND window_start = ${window.s} AND window_end = ${window.e}`;
    expect(httpcRows.length).toBe(httpc.records.length);
    const stdev = new Map(httpcRows.map((r) => [r.k, r.v]));
    for (const r of httpc.records) {
      expect(typeof r.Stdev).toBe("string");
      expect(stdev.get(`${r.UrlHash}|${r.HostHash}|${r.Port}`)).toBe(Number(r.Stdev));
    }
    const sqlRows = await h.sql<{ k: string; v: number }[]>`
      SELECT hash || '|' || dbc_hash AS k, time_std AS v FROM range_sql
      WHERE pcode = ${pcode} AND window_start = ${window.s} AND window_end = ${window.e}`;
    const std = new Map(sqlRows.map((r) => [r.k, r.v]));
    expect(sqlRows.length).toBe(sql.records.length);
    for (const r of sql.records) expect(std.get(`${r.hash}|${r.dbcHash}`)).toBe(Number(r.time_std));
  });

  it("events: metricValue text is a double, a pcode sent as text is the bigint project code", async () => {
    const pcode = h.pcodes[1]!;
    // Event windows are whole days: the first one starts at midnight before H0.
    const truth = h.truth.events(pcode, Date.UTC(2026, 0, 10), NOW - 10 * 60_000, NOW);
    expect(truth.some((e) => typeof e.pcode === "string")).toBe(true);
    const rows = await h.sql<{ key: string; v: number; pcode: string }[]>`
      SELECT event_key AS key, metric_value AS v, pcode::text FROM events WHERE pcode = ${pcode}`;
    expect(rows.length).toBe(truth.length);
    for (const e of truth) {
      expect(typeof e.metricValue).toBe("string");
      expect(rows.find((r) => r.key === e.uuid)).toEqual({ key: e.uuid, v: Number(e.metricValue), pcode: String(pcode) });
    }
  });
});

// A tiny API answering one range.remote page and one event history page with injected quirks.
const PCODE = 77;
const REMOTE_PAGE = {
  records: [
    { ip: "203.0.113.5", count: "7", city: "seoul", country: "KR", asn: 4766, tags: { tier: "edge" } },
    // A docs artefact as data: "12," is no number. Quarantined, the rest of the page is kept.
    { ip: "203.0.113.6", count: "12,", city: "pusan" },
    { ip: "203.0.113.7", count: 3, city: null, country: "JP" },
  ],
  total: 3,
};
function eventPage(stime: number) {
  return [
    {
      id: 4242,
      uuid: "00ff00ff00ff00ff00ff00ff00ff00ff",
      pcode: String(PCODE),
      oid: -17,
      eventTime: stime + 3 * HOUR,
      offTime: 0,
      status: "ON",
      level: "Critical",
      metricValue: "4.5187527E-4",
      region: "ap-northeast-2",
    },
  ];
}

function answer(req: RecordedRequest, res: ServerResponse) {
  const url = new URL(req.url, "http://x");
  const remote = /^\/open\/api\/json\/remote\/(\d+)\/(\d+)$/.exec(url.pathname);
  if (remote) return reply(res, 200, JSON.stringify(REMOTE_PAGE));
  if (url.pathname === "/open/api/json/event/history")
    return reply(res, 200, JSON.stringify(eventPage(Number(url.searchParams.get("stime")))));
  return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
}

describe("unknown fields and broken records (tiny server)", () => {
  let server: TestServer;
  let db: TestDatabase;
  const run = (streams: string[], from: number, to: number) =>
    runEngine(
      { baseUrl: server.url, projects: [{ pcode: PCODE, token: "quirk-token-1" }], database: db, now: () => NOW },
      { command: "backfill", mode: { kind: "backfill", from, to }, streams },
    );
  beforeAll(async () => {
    server = await startServer(answer);
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it("a range page: unknown keys go to extra, the broken record to quarantine, the others are written", async () => {
    const result = await run(["range.remote"], H0, H0 + HOUR);
    expect(result.exitCode).toBe(0);
    expect(result.streams.get("range.remote")).toMatchObject({ rows: 2, quarantined: 1, failed: 0 });
    const rows = await db.sql<{ ip: string; count: string; city: string | null; extra: unknown }[]>`
      SELECT ip, count::text, city, extra FROM range_remote WHERE pcode = ${PCODE} ORDER BY ip`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { ip: "203.0.113.5", count: "7", city: "seoul", extra: { asn: 4766, tags: { tier: "edge" } } },
      { ip: "203.0.113.7", count: "3", city: null, extra: {} },
    ]);
    const q = await db.sql<{ stream: string; pcode: string; idx: number; raw: unknown; reason: string; s: Date }[]>`
      SELECT stream, pcode::text, record_index AS idx, raw, reason, window_start AS s FROM quarantine`;
    expect(q).toHaveLength(1);
    expect(q[0]).toMatchObject({ stream: "range.remote", pcode: String(PCODE), idx: 1, raw: REMOTE_PAGE.records[1] });
    expect(q[0]!.s.getTime()).toBe(H0);
    expect(q[0]!.reason).toMatch(/count/);
    const [ledger] = await ledgerRows(db.sql, { stream: "range.remote" });
    expect(ledger).toMatchObject({ status: "done", rowsFetched: 3, rowsWritten: 2, expectedTotal: 3 });
  });

  it("re-fetching the window keeps one quarantine row and one copy of each record", async () => {
    await run(["range.remote"], H0, H0 + HOUR);
    const [n] = await db.sql<{ q: number; r: number }[]>`
      SELECT (SELECT count(*)::int FROM quarantine) AS q, (SELECT count(*)::int FROM range_remote) AS r`;
    expect(n).toEqual({ q: 1, r: 2 });
  });

  it("an event with an unknown key keeps it in extra; exponent text is a double", async () => {
    const day = Date.UTC(2026, 0, 9);
    const result = await run(["project.event_history"], day, day + 24 * HOUR);
    expect(result.exitCode).toBe(0);
    const rows = await db.sql<
      { key: string; pcode: string; v: number; status: string; off: Date | null; extra: Record<string, unknown> }[]
    >`
      SELECT event_key AS key, pcode::text, metric_value AS v, status, off_time AS off, extra FROM events`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      {
        key: "00ff00ff00ff00ff00ff00ff00ff00ff",
        pcode: String(PCODE),
        v: 4.5187527e-4,
        status: "on",
        off: null,
        extra: { region: "ap-northeast-2" },
      },
    ]);
  });
});
