// parseResponse: envelope drift fails the window, bad records are quarantined, documented variants
// (old servers, empty bodies, text scalars) parse, exploded rows have the documented keys.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, AuthError } from "../../src/api/errors.ts";
import { operation } from "../../src/catalogue/index.ts";
import type { OperationDef } from "../../src/catalogue/types.ts";
import { SchemaDriftError } from "../../src/schemas/errors.ts";
import { parsedOf } from "../support/pages.ts";
import { STREAM_COLUMNS } from "../support/stream-columns.ts";

type Row = Record<string, unknown>;
const T0 = 1536050100000;

async function drift(op: OperationDef, body: unknown): Promise<SchemaDriftError> {
  const e = await refused(op, body);
  expect(e).toBeInstanceOf(SchemaDriftError);
  return e as SchemaDriftError;
}

/** The error an answer is refused with, by the reader (api/page.ts) or the envelope's schema. */
async function refused(op: OperationDef, body: unknown): Promise<Error> {
  try {
    await parsedOf(op, body);
  } catch (e) {
    return e as Error;
  }
  throw new Error(`expected ${op.id} to refuse ${JSON.stringify(body)}`);
}

describe("envelope drift", () => {
  it("throws SchemaDriftError with the operation id and the zod error as cause", async () => {
    const e = await drift(operation("range.sql"), { data: [], total: 1 });
    expect(e.opId).toBe("range.sql");
    expect(e.cause).toBeInstanceOf(z.ZodError);
    expect(e.message).toContain("records: ");
    expect(e.name).toBe("SchemaDriftError");
  });

  it("an error body is refused, never an empty page", async () => {
    expect(await refused(operation("stat.transaction"), { msg: "[F] Invalid token", code: 400 })).toBeInstanceOf(AuthError);
    expect((await refused(operation("project.event_history"), { code: 500, msg: "boom" })).message).toContain("error body");
    expect((await drift(operation("stat.transaction"), { msg: "busy" })).message).toContain("total");
  });

  it("a text scalar that is not a number is drift", async () => {
    expect((await drift(operation("scalar.tps"), "<html>busy</html>")).message).toContain("expected a bare number");
  });
});

describe("per-record quarantine", () => {
  it("keeps the good records of a page and says where and why the bad one failed", async () => {
    const body = {
      records: [
        { ip: "1.2.3.4", count: 3, city: "Seoul", country: "KR (KOREA)" },
        { ip: "5.6.7.8", count: "12," },
        { ip: "9.9.9.9", count: "7", asn: 4766 },
      ],
      total: 3,
    };
    const parsed = await parsedOf(operation("range.remote"), body);
    expect(parsed.records).toEqual([
      { ip: "1.2.3.4", count: 3, city: "Seoul", country: "KR (KOREA)", extra: {} },
      { ip: "9.9.9.9", count: 7, city: null, country: null, extra: { asn: 4766 } },
    ]);
    expect(parsed.quarantined).toEqual([{ index: 1, raw: body.records[1], reason: 'count: expected an integer, got "12,"' }]);
    expect((parsed.envelope as { total: number }).total).toBe(3);
  });

  it("quarantines an agent whose series holds a bad point, keeps the other agent's points", async () => {
    const body = {
      pcode: 1,
      type: "thread_count",
      stime: T0,
      etime: T0 + 300_000,
      interval: 300,
      timeMerge: "sum",
      objects: [
        { oid: 1, oname: "a", series: [[T0, "x"]] },
        { oid: 2, oname: "b", series: [[T0, 5]] },
      ],
    };
    const parsed = await parsedOf(operation("series.apdex"), body);
    expect(parsed.records).toEqual([{ metric: "apdex", oid: 2, oname: "b", ts: new Date(T0), value: 5, extra: {} }]);
    expect(parsed.quarantined[0]!.reason).toBe('series.0.1: expected a number, got "x"');
  });
});

describe("no data", () => {
  it.each([
    ["project.event_history", ""],
    ["project.event_history", []],
    ["project.event_history", { code: 204, result: "no content" }],
    ["project.event_settings", null],
    ["scalar.cpu", ""],
  ])("%s with %j (documented) yields no records", async (id, body) => {
    const parsed = await parsedOf(operation(id), body);
    expect(parsed.records).toEqual([]);
    expect(parsed.quarantined).toEqual([]);
  });

  // No "no data" form is documented for them: an empty window recorded on it would be a lie.
  it.each([
    ["range.exception", ""],
    ["range.exception", []],
    ["stat.error", ""],
    ["stat.error", null],
    ["stat.error", "ok"],
    ["project.spot", ""],
    ["account.projects", []],
  ])("%s with %j (an operation answering an object) is refused, retried as an answer that did not arrive", async (id, body) => {
    const e = await refused(operation(id), body);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.name).toMatch(/EmptyAnswerError|NonJsonBodyError/);
  });
});

describe("values a record cannot be stored with (issue 21 item 7)", () => {
  const page = (odd: string) =>
    `{"stime":0,"etime":300000,"total":2,"retrievedTotal":2,"data":[{"ip":"1.1.1.1","count":3,"odd":${odd}},{"ip":"2.2.2.2","count":4}]}`;

  it("a 5,000-deep array quarantines its record, not the window; the other record is kept", async () => {
    const parsed = await parsedOf(operation("stat.remote"), page(`${"[".repeat(5000)}${"]".repeat(5000)}`));
    expect(parsed.records).toEqual([{ ip: "2.2.2.2", count: 4, city: null, country: null, extra: {} }]);
    expect(parsed.quarantined).toHaveLength(1);
    expect(parsed.quarantined[0]!.reason).toBe("odd: nested deeper than 64 levels (cut; the record is kept as text)");
    expect(parsed.quarantined[0]!.raw).toMatch(
      /^\{"ip":"1\.1\.1\.1","count":3,"odd":\[{60,63}"\(nested deeper than 64 levels; cut\)"\]{60,63}\}$/,
    );
  });

  it("1e400 keeps its raw text in the quarantined record, with a reason that says so", async () => {
    const parsed = await parsedOf(operation("stat.remote"), page("1e400"));
    expect(parsed.records.map((r) => (r as Row).ip)).toEqual(["2.2.2.2"]);
    expect(parsed.quarantined).toEqual([
      {
        index: 0,
        raw: '{"ip":"1.1.1.1","count":3,"odd":1e400}',
        reason: "odd: 1e400 is beyond the range of a double (overflow; its text is kept)",
      },
    ]);
  });

  it("deep nesting and long numbers in one body: both read exactly, without recursing into the depth", async () => {
    const deep = `${"[".repeat(5000)}"a]b"${"]".repeat(5000)}`;
    const body = `{"total":3,"retrievedTotal":3,"data":[{"ip":"1","count":1,"odd":${deep},"huge":1e400},{"ip":"2","count":2,"id":9007199254740993123},{"ip":"3","count":3,"s":"[{"}]}`;
    const parsed = await parsedOf(operation("stat.remote"), body);
    expect(parsed.records.map((r) => (r as Row).extra)).toEqual([{ id: 9007199254740993123n }, { s: "[{" }]);
    expect(parsed.quarantined.map((q) => q.reason)).toEqual(["odd: nested deeper than 64 levels (cut; the record is kept as text)"]);
    expect(parsed.quarantined[0]!.raw).toMatch(/"\(nested deeper than 64 levels; cut\)"\]+,"huge":1e400\}$/);
  });

  it("a record that is not JSON by itself is quarantined alone; the records read with it in one parse are kept", async () => {
    // Records are read a batch at a time with one parse; a bad one sends its batch back to a parse per record.
    // About 250 bytes a record: the 600 make three batches (parse-response.ts BATCH_BYTES).
    const good = (i: number) =>
      `{"ip":"10.0.0.${i % 250}","count":${i},"id":${i === 7 ? "9007199254740993123" : i},"s":"${"x".repeat(200)}"}`;
    const texts = Array.from({ length: 600 }, (_, i) => (i === 300 ? `{"ip":"bad",count:1}` : good(i)));
    const parsed = await parsedOf(operation("stat.remote"), `{"total":600,"retrievedTotal":600,"data":[${texts.join(",")}]}`);
    expect(parsed.records).toHaveLength(599);
    expect(parsed.records.map((r) => (r as Row).count)).toEqual(Array.from({ length: 600 }, (_, i) => i).filter((i) => i !== 300));
    expect((parsed.records[7] as Row).extra).toEqual({ id: 9007199254740993123n, s: "x".repeat(200) });
    expect(parsed.quarantined).toHaveLength(1);
    expect(parsed.quarantined[0]).toMatchObject({ index: 300, raw: `{"ip":"bad",count:1}` });
    expect(parsed.quarantined[0]!.reason).toMatch(/^not valid JSON: /);
  });

  it("long integers alone still parse exactly, unmarked", async () => {
    const parsed = await parsedOf(operation("stat.remote"), page("9007199254740993123"));
    expect(parsed.quarantined).toEqual([]);
    expect((parsed.records[0] as Row).extra).toEqual({ odd: 9007199254740993123n });
  });
});

describe("counts the answer cannot bear", () => {
  const stat = (total: unknown, retrievedTotal: unknown) => ({ stime: 0, etime: 300_000, total, retrievedTotal, data: [] });
  it("total below retrievedTotal, and a negative total, are drift with the reason", async () => {
    expect((await drift(operation("stat.remote"), stat(3, 4))).message).toContain("total: 3 is below retrievedTotal 4");
    expect((await drift(operation("stat.remote"), stat(-1, 0))).message).toContain(
      "total: expected a count (a non-negative integer), got -1",
    );
    expect((await drift(operation("range.remote"), { records: [], total: -2 })).message).toContain("got -2");
    expect((await parsedOf(operation("stat.remote"), stat(0, 0))).records).toEqual([]);
  });
});

describe("documented variants", () => {
  it('text scalars: 5, 93.07 and the quoted "66.0"', async () => {
    expect((await parsedOf(operation("scalar.host"), "5")).records).toEqual([{ metric: "host", value: 5, extra: {} }]);
    expect((await parsedOf(operation("scalar.tps"), "93.07\n")).records).toEqual([{ metric: "tps", value: 93.07, extra: {} }]);
    expect((await parsedOf(operation("scalar.cpu"), '"66.0"')).records).toEqual([{ metric: "cpu", value: 66, extra: {} }]);
  });

  it("older servers: per-agent series nested under data", async () => {
    const old = {
      pcode: 5,
      type: "thread_count",
      stime: T0,
      etime: T0,
      interval: 300,
      data: [{ oid: -7, oname: "8080", data: [[T0, 95.2]] }],
    };
    const parsed = await parsedOf(operation("series.thread_count"), old);
    expect(parsed.records).toEqual([{ metric: "thread_count", oid: -7, oname: "8080", ts: new Date(T0), value: 95.2, extra: {} }]);
  });

  it("older servers: averaged series with op + data; averaged rows have oid null", async () => {
    const old = { pcode: 5, type: "thread_count", stime: T0, etime: T0, interval: 300, op: "avg", data: [[T0, 117.49]] };
    const parsed = await parsedOf(operation("series.thread_count.avg"), old);
    expect((parsed.envelope as Row).objectMerge).toBe("avg");
    expect(parsed.records).toEqual([{ metric: "thread_count", oid: null, oname: null, ts: new Date(T0), value: 117.49, extra: {} }]);
  });

  it("visitors: [ts, count] pairs become rows tagged with the granularity", async () => {
    const body = { data: [[T0, 12]], pcode: 3000000079, stime: T0, etime: T0 + 300_000, total: 12 };
    expect((await parsedOf(operation("visitors.5m"), body)).records).toEqual([
      { granularity: "5m", ts: new Date(T0), count: 12, extra: {} },
    ]);
  });

  it("heap use rows carry the merge of the operation, not the echoed one", async () => {
    const body = {
      pcode: 1,
      stime: T0,
      etime: T0,
      timeMerge: "avg",
      unit: "byte",
      data: [{ oid: 1, oname: "x", heap_use: "36121554.72" }],
    };
    const [row] = (await parsedOf(operation("range.heap_use.max"), body)).records as Row[];
    expect(row).toEqual({ oid: 1, oname: "x", heap_use: 36121554.72, time_merge: "max", unit: "byte", extra: {} });
  });

  it("tx_caller/tx_domain calls keep the undocumented payload whole", async () => {
    const payload = { anything: [1, 2] };
    expect((await parsedOf(operation("calls.tx_domain"), payload)).records).toEqual([{ metric_type: "tx_domain", payload, extra: {} }]);
  });

  it("event settings: type keys in any case, one row per entry with the same columns", async () => {
    const body = [
      { productType: "APM", platform: "JAVA", events: [{ Transaction: [{ id: "t1", eventLevel: "20" }], CUSTOM: [{ id: "c1", x: 1 }] }] },
    ];
    const rows = (await parsedOf(operation("project.event_settings"), body)).records as Row[];
    expect(rows.map((r) => [r.event_type, r.setting_id, r.event_level])).toEqual([
      ["TRANSACTION", "t1", 20],
      ["CUSTOM", "c1", null],
    ]);
    expect(rows[1]!.extra).toEqual({ x: 1 });
    for (const row of rows) expect(Object.keys(row).sort()).toEqual([...STREAM_COLUMNS.event_settings!].sort());
  });
});

describe("aggregated statistics (no docs samples)", () => {
  const body = JSON.stringify({
    stime: T0,
    etime: T0 + 3_600_000,
    timestamp: T0 + 3_600_500,
    total: 12000,
    retrievedTotal: 10000,
    data: [
      {
        serviceHash: -5,
        service: "/a",
        count: "10",
        error: 1,
        timeSum: "1500",
        timeAvg: "150.5",
        timeMin: 3,
        timeMax: 900,
        apdex: "0.93",
      },
      { serviceHash: "oops", service: "/b", count: 1 },
    ],
  });

  it("parses string numbers, keeps truncation counts in the envelope, quarantines a bad hash", async () => {
    const parsed = await parsedOf(operation("stat.transaction"), body);
    expect(parsed.envelope).toMatchObject({ total: 12000, retrievedTotal: 10000, etime: T0 + 3_600_000 });
    const [row] = parsed.records as Row[];
    expect(row).toMatchObject({
      service_hash: -5,
      service: "/a",
      count: 10,
      error: 1,
      time_sum: 1500,
      time_avg: 150.5,
      time_min: 3,
      time_max: 900,
      apdex: 0.93,
    });
    expect(Object.keys(row!).sort()).toEqual([...STREAM_COLUMNS.stat_transaction!].sort());
    expect(parsed.quarantined.map((q) => q.index)).toEqual([1]);
    expect(parsed.quarantined[0]!.reason).toContain("serviceHash");
  });

  it.each([
    ["stat.sql", { sqlHash: 1, dbcHash: 2, count: "3", crudMetrics: "S" }],
    ["stat.httpc", { urlHash: 1, hostHash: 2, port: "8080", count: 3, timeStdev: "1.5" }],
    ["stat.error", { classHash: 1, msgHash: 2, count: 3, oids: [1, -2], onames: ["a"], time: T0, errorSnapId: 12 }],
    ["stat.remote", { ip: "1.1.1.1", count: "4", country: "KR" }],
  ])("%s rows have the documented columns", async (id, record) => {
    const parsed = await parsedOf(operation(id), { stime: T0, etime: T0, total: 1, retrievedTotal: 1, data: [record] });
    expect(parsed.quarantined).toEqual([]);
    const table = operation(id).stream!.table;
    expect(Object.keys(parsed.records[0] as Row).sort()).toEqual([...STREAM_COLUMNS[table]!].sort());
  });

  it("request payloads: httpc filter needs host and port, 24 hours at most", async () => {
    const httpc = operation("stat.httpc").requestSchema!;
    expect(httpc.safeParse({ stime: T0, etime: T0 + 3_600_000, filter: { host: "h", port: "80" } }).success).toBe(true);
    expect(httpc.safeParse({ stime: T0, etime: T0 + 3_600_000, filter: { host: "h" } }).success).toBe(false);
    expect(httpc.safeParse({ stime: T0, etime: T0 + 86_400_001 }).success).toBe(false);
    expect(operation("stat.sql").requestSchema!.safeParse({ stime: T0, etime: T0 + 1, filter: { host: "h", port: "1" } }).success).toBe(
      false,
    );
  });
});
