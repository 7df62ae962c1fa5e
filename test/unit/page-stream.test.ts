// Answers read as they stream in (api/page.ts): records split off the envelope at any chunk
// boundary, kept within a memory budget or spilled to a file, read back exactly; malformed bodies
// refused whole.
import { describe, expect, it } from "vitest";
import { NonJsonBodyError } from "../../src/api/errors.ts";
import { MemoryBudget, RecordSpool } from "../../src/api/spool.ts";
import { operation } from "../../src/catalogue/index.ts";
import { RecordSplitter, SplitError } from "../../src/schemas/split-records.ts";
import { pageOf } from "../support/pages.ts";

/** Splits `text` fed in chunks of `size` bytes: the envelope's text and each record's. */
function split(text: string, at: string | null | undefined, size: number): { envelope: string; records: string[] } {
  const env: Buffer[] = [];
  const records: string[] = [];
  let current: Buffer[] = [];
  const splitter = new RecordSplitter(at, {
    envelope: (b) => env.push(Buffer.from(b)),
    record: (b) => current.push(Buffer.from(b)),
    endRecord: () => {
      records.push(Buffer.concat(current).toString("utf8"));
      current = [];
    },
  });
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += size) splitter.push(bytes.subarray(i, i + size));
  splitter.end();
  return { envelope: Buffer.concat(env).toString("utf8"), records };
}

const records = [
  { a: 1, s: 'quote " and \\ backslash, ] and } and , inside', nested: { x: [1, { y: "]" }] } },
  "a string record",
  12.5e3,
  null,
  { u: "ünïcødé ✓ \ud83d\ude00", data: [1, 2] },
];

describe("RecordSplitter", () => {
  const body = `{ "total" : 5, "data" : ${JSON.stringify(records, null, 1)}, "after": {"data": [9]}, "x": "data" }`;

  it("gives every record's text and the envelope without them, whatever the chunks", () => {
    for (const size of [1, 2, 3, 7, 64, body.length]) {
      const out = split(body, "data", size);
      expect(
        out.records.map((r) => JSON.parse(r)),
        `chunks of ${size}`,
      ).toEqual(records);
      expect(JSON.parse(out.envelope), `chunks of ${size}`).toEqual({ total: 5, data: [], after: { data: [9] }, x: "data" });
    }
  });

  it("splits a bare array, and leaves an object whole where the records are the body", () => {
    const out = split(`\ufeff ${JSON.stringify(records)} `, null, 5);
    expect(out.records.map((r) => JSON.parse(r))).toEqual(records);
    expect(JSON.parse(out.envelope)).toEqual([]);
    expect(split('{"code":204,"result":"no content"}', null, 4)).toEqual({ envelope: '{"code":204,"result":"no content"}', records: [] });
    expect(split('{"data":[1]}', undefined, 3)).toEqual({ envelope: '{"data":[1]}', records: [] });
  });

  it("finds the key however it is escaped, and only at the top level", () => {
    const out = split('{"inner":{"data":[1,2]},"d\\u0061ta":[3,4]}', "data", 2);
    expect(out.records).toEqual(["3", "4"]);
    expect(JSON.parse(out.envelope)).toEqual({ inner: { data: [1, 2] }, data: [] });
  });

  it("splits bodies of random records at random chunk sizes exactly as JSON.parse reads them", () => {
    // Strings full of what the scanner looks at: quotes, backslashes (runs of them, and before a
    // quote), brackets, escapes and multi-byte characters, so that chunks end on each of them.
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const pieces = ['"', "\\", "\\\\", '\\"', "]", "}", "[", "{", ",", "é", "✓", "\ud83d\ude00", "x", " ", "\n"];
    const text = () => Array.from({ length: Math.floor(random() * 12) }, () => pick(pieces)).join("");
    const value = (depth: number): unknown => {
      const kind = depth > 3 ? Math.floor(random() * 2) : Math.floor(random() * 4);
      if (kind === 0) return text();
      if (kind === 1) return Math.floor(random() * 1e6) / 8;
      if (kind === 2) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [text(), value(depth + 1)]));
    };
    for (let body = 0; body < 60; body++) {
      const data = Array.from({ length: 1 + Math.floor(random() * 20) }, () => ({ [text()]: value(1), s: text() }));
      const json = JSON.stringify({ total: data.length, data });
      for (const size of [1 + Math.floor(random() * 5), 1 + Math.floor(random() * 300)]) {
        const out = split(json, "data", size);
        expect(out.records, `body ${body}, chunks of ${size}`).toEqual(data.map((r) => JSON.stringify(r)));
      }
    }
  });

  it.each([
    ['{"data":[1,2', "ends inside"],
    ['{"data":[1,,2]}', "comma without a record"],
    ['{"data":[,1]}', "comma without a record"],
    ['{"data":[1,]}', "comma before the end"],
    ['{"data":[{}{}]}', "without a comma"],
    ['{"data":[]}}', "more than one value"],
    ['{"data":[]} {"data":[]}', "more than one value"],
    ['{"data":[1],"data":[2]}', "appears twice"],
  ])("refuses %s (%s)", (text, why) => {
    expect(() => split(text, "data", 3)).toThrow(SplitError);
    expect(() => split(text, "data", 3)).toThrow(new RegExp(why));
  });
});

describe("RecordSpool", () => {
  const texts = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ i, pad: "x".repeat(i % 97) }));

  const fill = (spool: RecordSpool) => {
    for (const t of texts) {
      const b = Buffer.from(t);
      // In two pieces, as a record split across chunks arrives.
      spool.record(b.subarray(0, 3));
      spool.record(b.subarray(3));
      spool.endRecord();
    }
  };

  it("reads back every record in order, in memory and spilled to a file alike", () => {
    for (const budget of [new MemoryBudget(64 * 2 ** 20), new MemoryBudget(64 * 1024)]) {
      const spool = new RecordSpool(budget, 1 << 20);
      fill(spool);
      expect(spool.spilled).toBe(budget.limit < 100_000);
      expect(budget.used).toBeLessThanOrEqual(budget.limit);
      const back = [...spool.batches(4096)].map((batch) => Array.from({ length: batch.count }, (_, k) => batch.text(k)));
      expect(back.flat()).toEqual(texts);
      // Batches hold about their size of text: at least one record, never much beyond.
      for (const batch of back) expect(batch.length === 1 || batch.join("").length <= 4096).toBe(true);
      // A batch also reads back parsed at once.
      const arrays = [...spool.batches(4096)].flatMap((batch) => batch.values() ?? []);
      expect(arrays).toEqual(texts.map((t) => JSON.parse(t)));
      spool.dispose();
      expect(budget.used).toBe(0);
    }
  });

  it("refuses a record beyond its limit, naming the setting", () => {
    const spool = new RecordSpool(new MemoryBudget(2 ** 20), 100);
    expect(() => spool.record(Buffer.alloc(101, 0x20))).toThrow(/APM_MAX_RECORD_BYTES/);
    spool.dispose();
  });
});

describe("readPage", () => {
  it("refuses a body cut short as not JSON, and keeps no memory of it", async () => {
    const budget = new MemoryBudget(2 ** 20);
    const op = operation("stat.transaction");
    await expect(pageOf(op, '{"total":1,"data":[{"count":1}', { budget })).rejects.toBeInstanceOf(NonJsonBodyError);
    expect(budget.used).toBe(0);
  });

  it("counts the records of a page of 100,000 within a budget far smaller than it", async () => {
    const op = operation("stat.transaction");
    const data = Array.from({ length: 100_000 }, (_, i) => ({ serviceHash: i, service: `/s/${i}`, count: 1 }));
    const body = JSON.stringify({ stime: 0, etime: 3_600_000, total: data.length, retrievedTotal: data.length, data });
    const budget = new MemoryBudget(256 * 1024);
    const page = await pageOf(op, body, { chunk: 16_384, budget });
    expect(page.records.count).toBe(100_000);
    expect(page.records.spilled).toBe(true);
    expect(page.envelope).toMatchObject({ total: 100_000, data: [] });
    expect(budget.used).toBeLessThanOrEqual(256 * 1024);
    page.dispose();
    expect(budget.used).toBe(0);
  });
});
