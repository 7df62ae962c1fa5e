// A small answer parsed whole (api/whole-page.ts) reads exactly what the record splitter reads:
// the same envelope, records, quarantined records and errors, for every docs sample and for the
// hostile bodies the splitter was built against; where only the splitter reads a body exactly, it
// takes the splitter's path. Memory drawn from the budget is given back either way.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { parseEnvelope, parseRecordBatches } from "../../src/api/parse-response.ts";
import { inPieces, PIECE_BYTES } from "../../src/api/pieces.ts";
import { MemoryBudget, RecordSpool } from "../../src/api/spool.ts";
import { WholeBody } from "../../src/api/whole-page.ts";
import { OPERATIONS, type OperationDef, operation } from "../../src/catalogue/index.ts";
import { fixturePath } from "../support/fixtures.ts";
import { pageOf } from "../support/pages.ts";

type Read = { path: "whole" | "split"; envelope: unknown; records: unknown[]; quarantined: unknown[] } | { error: string };

/** The answer read with whole pages allowed (`wholeBytes` undefined) or not (0), then parsed as the write parses it. */
async function read(
  op: OperationDef,
  text: string,
  opts: { wholeBytes?: number; chunk?: number; budget?: MemoryBudget } = {},
): Promise<Read> {
  const budget = opts.budget ?? new MemoryBudget(64 * 2 ** 20);
  try {
    const page = await pageOf(op, text, { ...opts, budget });
    try {
      const envelope = parseEnvelope(op, page);
      const records: unknown[] = [];
      const quarantined: unknown[] = [];
      // Small batches: a whole page is read back in several too.
      for (const batch of parseRecordBatches(op, page, envelope, 256)) {
        records.push(...batch.records);
        quarantined.push(...batch.quarantined);
      }
      return { path: page.records instanceof RecordSpool ? "split" : "whole", envelope, records, quarantined };
    } finally {
      page.dispose();
    }
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  } finally {
    expect(budget.used).toBe(0);
  }
}

/** Reads `text` both ways and checks they agree; returns the path the default took. */
async function agree(op: OperationDef, text: string): Promise<string> {
  const split = await read(op, text, { wholeBytes: 0 });
  const whole = await read(op, text);
  expect("path" in split ? split.path : "error").not.toBe("whole");
  const { path: taken, ...rest } = "path" in whole ? whole : { path: "error", ...whole };
  const { path: _, ...expected } = "path" in split ? split : { path: "error", ...split };
  expect(rest).toEqual(expected);
  return taken;
}

const stat = operation("stat.transaction");
const events = operation("project.event_history");
const record = (i: number, extra: Record<string, unknown> = {}) => ({ serviceHash: i, service: `/s/${i}`, count: i, ...extra });
const body = (data: string) => `{"stime":0,"etime":3600000,"total":2,"retrievedTotal":2,"data":${data}}`;

describe("a small answer parsed whole", () => {
  it("reads a plain statistics page whole, the same records as the splitter, in batches", async () => {
    const text = body(JSON.stringify(Array.from({ length: 50 }, (_, i) => record(i))));
    expect(await agree(stat, text)).toBe("whole");
    const whole = await read(stat, text);
    expect("records" in whole && whole.records).toHaveLength(50);
    // Read back in batches of about as many records as 256 bytes of their text hold.
    const page = await pageOf(stat, text);
    const counts = [...page.records.batches(256)].map((b) => b.count);
    page.dispose();
    expect(counts.length).toBeGreaterThan(5);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(50);
  });

  it.each([
    ["a number beyond 2^53 in a record", body(`[{"serviceHash":12345678901234567890,"service":"/a","count":1}]`), "split"],
    ["a number beyond a double (overflow)", body(`[{"serviceHash":1,"service":"/a","count":1e400}]`), "split"],
    [
      "a number beyond 2^53 in the envelope",
      `{"stime":0,"etime":3600000,"total":1,"retrievedTotal":1,"more":12345678901234567890,"data":[{"serviceHash":1,"count":1}]}`,
      "split",
    ],
    ["the records key twice", `{"data":[{"count":1}],"data":[{"count":2}]}`, "error"],
    ["the records key twice, once escaped", `{"d\\u0061ta":[{"count":1}],"data":[{"count":2}]}`, "error"],
    ["the records key inside a record", body(`[{"serviceHash":1,"count":1,"data":[1]}]`), "split"],
    ["a key ending in the records key's name", `{"total":1,"retrievedTotal":1,"metadata":1,"data":[{"serviceHash":1,"count":1}]}`, "whole"],
    ["the key's text escaped inside a string", body(`[{"serviceHash":1,"service":"\\"data\\"","count":1}]`), "whole"],
    ["a NUL escape", body(`[{"serviceHash":1,"service":"a\\u0000b","count":1}]`), "split"],
    ["a byte order mark", `\ufeff${body("[]")}`, "split"],
    ["a record nested deeper than 64 levels", body(`[{"serviceHash":1,"count":1,"deep":${"[".repeat(70)}${"]".repeat(70)}}]`), "whole"],
    ["a record refused by its schema", body(`[{"serviceHash":"x","count":1},{"serviceHash":2,"count":2}]`), "whole"],
    ["a record that is not an object", body(`[5,{"serviceHash":2,"count":2}]`), "whole"],
    ["records not an array", `{"stime":0,"data":{"count":1}}`, "error"],
    ["no records key", `{"stime":0,"etime":1}`, "error"],
    ["an error object on a 200", `{"msg":"[F] Invalid token","code":400}`, "error"],
    ["a body cut short", body(`[{"serviceHash":1,"count":1}`), "error"],
    ["a trailing comma", body(`[{"serviceHash":1,"count":1},]`), "error"],
    ["two values", `${body("[]")} ${body("[]")}`, "error"],
    ["an empty body", "", "error"],
    ["invalid UTF-8 in a string", body(`[{"serviceHash":1,"service":"a\xff","count":1}]`), "whole"],
  ])("%s: the same as the splitter", async (_why, text, taken) => {
    expect(await agree(stat, text)).toBe(taken);
  });

  it.each([
    ["events", JSON.stringify([{ pcode: 1, eventTime: 1, title: "a" }])],
    ["no content", `{"code":204,"result":"no content"}`],
    ["an empty array", "[]"],
    ["an empty body", ""],
  ])("reads a bare-array answer (%s) as the splitter does", async (_why, text) => {
    await agree(events, text);
  });

  // Over twice PIECE_BYTES a body is parsed a piece at a time (inPieces), never a string of it all.
  const large = (make: (i: number) => unknown, n = 3_000) => JSON.stringify(Array.from({ length: n }, (_, i) => make(i)));
  it.each([
    ["plain records", body(large((i) => record(i)))],
    [
      "records whose strings hold the cut's `},{` and the array's end `}]`",
      body(large((i) => record(i, { note: `a},{"b":1},{c}]x${i}` }))),
    ],
    ["records holding arrays of objects", body(large((i) => record(i, { list: [{ a: i }, { b: i }] })))],
    ["records written with white space", body(JSON.stringify(JSON.parse(large((i) => record(i))), null, 1))],
    [
      "an envelope after the records with an array and a `]` in a string",
      `{"stime":0,"etime":3600000,"total":2,"retrievedTotal":2,"data":${large((i) => record(i))},"ids":[1,2],"note":"x]"}`,
    ],
    ["no records", body(`[${" ".repeat(3 * PIECE_BYTES)}]`)],
    ["one record too large for a piece", body(JSON.stringify([record(1, { service: "s".repeat(3 * PIECE_BYTES) })]))],
    ["a record refused by its schema among them", body(large((i) => (i === 1_500 ? record(i, { serviceHash: "x" }) : record(i))))],
  ])("a large body with %s: the same as the splitter", async (_why, text) => {
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * PIECE_BYTES);
    expect(Buffer.byteLength(text)).toBeLessThan(1 << 20);
    const whole = await read(stat, text, { wholeBytes: 1 << 20 });
    const split = await read(stat, text, { wholeBytes: 0 });
    expect("path" in whole && whole.path).toBe("whole");
    expect(whole).toEqual({ ...split, path: "whole" });
  });

  it("never decodes a large body held whole into one string: JSON.parse reads pieces of about PIECE_BYTES", async () => {
    const text = body(large((i) => record(i)));
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * PIECE_BYTES);
    const parse = vi.spyOn(JSON, "parse");
    try {
      const got = await read(stat, text, { wholeBytes: 1 << 20 });
      expect("path" in got && got.path).toBe("whole");
      expect("records" in got && got.records).toHaveLength(3_000);
      const lengths = parse.mock.calls.map(([arg]) => String(arg).length);
      expect(lengths.length).toBeGreaterThan(2);
      expect(Math.max(...lengths)).toBeLessThan(PIECE_BYTES + 1_000);
    } finally {
      parse.mockRestore();
    }
  });

  it("parses a large body in pieces where it can show they are the records, and declines where it cannot", () => {
    // Strings holding the cut's `},{`: a cut there does not parse, and the next one is taken.
    const text = body(large((i) => record(i, { note: `},{"x":${i}},{` })));
    const parsed = inPieces(Buffer.from(text), "data");
    expect(parsed?.list).toEqual(JSON.parse(text).data);
    expect(parsed?.root).toEqual({ ...JSON.parse(text), data: [] });
    // A bare array too.
    expect(inPieces(Buffer.from(large((i) => record(i))), null)?.list).toHaveLength(3_000);
    // The array's end not the body's last `]` (an array after it): pieces that do not parse.
    expect(inPieces(Buffer.from(`{"data":${large((i) => record(i))},"ids":[1]}`), "data")).toBeUndefined();
    // Not an array at the key, the key not followed by a value, a body that does not parse.
    expect(inPieces(Buffer.from(`{"data":{"a":${large((i) => record(i))}}}`), "data")).toBeUndefined();
    expect(inPieces(Buffer.from(`{"x":"data","y":${large((i) => record(i))}}`), "data")).toBeUndefined();
    expect(inPieces(Buffer.from(text.slice(0, -1)), "data")).toBeUndefined();
  });

  it("takes the splitter for a body larger than it holds whole, switching mid-body", async () => {
    const text = body(JSON.stringify(Array.from({ length: 200 }, (_, i) => record(i))));
    const got = await read(stat, text, { wholeBytes: 1000, chunk: 7 });
    expect("path" in got && got.path).toBe("split");
    expect(got).toEqual({ ...(await read(stat, text, { wholeBytes: 0, chunk: 7 })) });
  });

  it("holds nothing more once it let go of a body: the rest of that body is split, never held again", () => {
    const budget = new MemoryBudget(1 << 20);
    const whole = new WholeBody(budget, 10, "data");
    expect(whole.add(Buffer.from('{"data":'))).toBe(true);
    expect(whole.add(Buffer.from("[1,2,3,4]}"))).toBe(false);
    whole.release();
    expect(budget.used).toBe(0);
    expect(whole.add(Buffer.from("}"))).toBe(false);
    expect(whole.chunks).toEqual([]);
    expect(whole.parse()).toBeNull();
    expect(budget.used).toBe(0);
  });

  it("takes the splitter when the budget cannot hold the parsed records, and gives every byte back", async () => {
    const text = body(JSON.stringify(Array.from({ length: 20 }, (_, i) => record(i))));
    // The body's bytes fit, twice them (the parsed records' charge) does not.
    const budget = new MemoryBudget(Math.ceil(text.length * 1.5));
    const got = await read(stat, text, { budget });
    expect("path" in got && got.path).toBe("split");
    expect("records" in got && got.records).toHaveLength(20);
    expect(budget.used).toBe(0);
  });

  it("refuses to read a page's records after it was disposed of, as the spool does", async () => {
    const page = await pageOf(stat, body(JSON.stringify([record(1)])));
    expect(page.records instanceof RecordSpool).toBe(false);
    page.dispose();
    expect(() => [...page.records.batches(1024)]).toThrow(/disposed/);
  });

  const samplesDir = fixturePath("api-samples");
  const byFile = new Map(OPERATIONS.map((op) => [`${op.method}__${op.path.replace(/^\//, "").replaceAll("/", "_")}`, op]));
  const samples = readdirSync(samplesDir)
    .filter((f) => f.endsWith(".json") && !f.includes(".request"))
    .map((f) => [f, byFile.get(f.slice(0, -".json".length).split(".")[0]!)] as const)
    .filter((s): s is readonly [string, OperationDef] => s[1] !== undefined && s[1].format !== "text" && s[1].records !== undefined);

  it("found the docs samples", () => {
    expect(samples.length).toBeGreaterThan(30);
  });

  it.each(samples)("reads the docs sample %s as the splitter does", async (file, op) => {
    await agree(op, readFileSync(path.join(samplesDir, file), "utf8"));
  });
});
