// A record's keys are the server's, kept exactly in `extra` (no prototype tricks), and never meet
// the keys we keep there ourselves; counts are never negative. Both lanes of record parsing (the
// fast lane for clean records, zod for the others) give the same answer.
import { describe, expect, it } from "vitest";
import type { ParsedResponse } from "../../src/api/parse-response.ts";
import { operation } from "../../src/catalogue/index.ts";
import { cleanRow, ORIGINAL_KEY } from "../../src/db/write/cleanText.ts";
import { extraKey, RESERVED_EXTRA_KEYS } from "../../src/kernel/record.ts";
import { parsedOf } from "../support/pages.ts";

type Row = { extra: Record<string, unknown> } & Record<string, unknown>;

/** A stat.transaction page of these records (as JSON text: `__proto__` stays a key). */
function statPage(records: string[]): Promise<ParsedResponse> {
  const body = `{"stime":0,"etime":3600000,"total":${records.length},"retrievedTotal":${records.length},"data":[${records.join(",")}]}`;
  return parsedOf(operation("stat.transaction"), body);
}

describe("record keys", () => {
  it("keeps a field named __proto__ (and constructor) in extra as an own key, in both lanes", async () => {
    // count as text takes zod's lane, as a number the fast lane.
    for (const count of ["3", '"3"']) {
      const { records, quarantined } = await statPage([`{"serviceHash":1,"count":${count},"__proto__":{"polluted":1},"constructor":"c"}`]);
      expect(quarantined).toEqual([]);
      const extra = (records[0] as Row).extra;
      expect(Object.keys(extra)).toEqual(["__proto__", "constructor"]);
      expect(Object.getPrototypeOf(extra)).toBe(Object.prototype);
      expect(JSON.stringify(extra)).toBe('{"__proto__":{"polluted":1},"constructor":"c"}');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it("moves a server key that has the form of ours one underscore aside, in both lanes", async () => {
    expect(RESERVED_EXTRA_KEYS).toContain(ORIGINAL_KEY);
    for (const count of ["3", '"3"']) {
      const { records } = await statPage([
        `{"serviceHash":1,"count":${count},"_original":"theirs","__original":2,"$product":"p","original":4}`,
      ]);
      expect((records[0] as Row).extra).toEqual({ __original: "theirs", ___original: 2, _$product: "p", original: 4 });
    }
    expect(["_original", "__original", "$product", "_$product", "original", "x_original"].map(extraKey)).toEqual([
      "__original",
      "___original",
      "_$product",
      "__$product",
      "original",
      "x_original",
    ]);
  });

  it("a row whose text the database cannot hold keeps its originals under our key, the server's beside it", async () => {
    const { records } = await statPage([`{"serviceHash":1,"count":3,"service":"a\\u0000b","_original":"theirs"}`]);
    const row = records[0] as Row;
    const columns = ["service", "extra"];
    const values = [row.service, row.extra];
    expect(cleanRow(columns, values)).toBe(1);
    expect(values[1]).toEqual({ __original: "theirs", [ORIGINAL_KEY]: { service: "a\\u0000b" } });
  });

  it("keeps a __proto__ key through cleaning a row the database cannot hold", async () => {
    const extra = JSON.parse('{"__proto__":"x\\u0000y","k":1}') as Record<string, unknown>;
    const values: unknown[] = [extra];
    expect(cleanRow(["extra"], values)).toBe(1);
    expect(JSON.stringify(values[0])).toBe(`{"__proto__":"x\uFFFDy","k":1,"_original":{"__proto__":"x\\\\u0000y"}}`);
  });

  it("an event setting's own $product is kept beside the product's fields", async () => {
    const body = [
      { productType: "JAVA", platform: "APM", productNote: 1, events: [{ BASIC: [{ id: "s1", $product: "the entry's own" }] }] },
    ];
    const { records, quarantined } = await parsedOf(operation("project.event_settings"), body);
    expect(quarantined).toEqual([]);
    expect((records[0] as Row).extra).toEqual({ _$product: "the entry's own", $product: { productNote: 1 } });
  });
});

describe("counts", () => {
  it.each(["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"])(
    "%s: a negative count or error quarantines its record, with why",
    async (id) => {
      const op = operation(id);
      const keys: Record<string, Record<string, unknown>> = {
        "stat.transaction": { serviceHash: 1 },
        "stat.sql": { sqlHash: 1, dbcHash: 2 },
        "stat.httpc": { urlHash: 1, hostHash: 2 },
        "stat.error": { classHash: 1, msgHash: 2 },
        "stat.remote": { ip: "10.0.0.1" },
      };
      const good = { ...keys[id], count: 3 };
      const page = (r: unknown[]) => ({ stime: 0, etime: 3600000, total: r.length, retrievedTotal: r.length, data: r });
      const bad = [{ ...good, count: -3 }, ...(id === "stat.error" || id === "stat.remote" ? [] : [{ ...good, error: "-1" }])];
      const { records, quarantined } = await parsedOf(op, page([good, ...bad]));
      expect(records).toHaveLength(1);
      expect(quarantined.map((q) => q.reason)).toEqual(
        ["count: expected a count, never negative, got -3", 'error: expected a count, never negative, got "-1"'].slice(0, bad.length),
      );
    },
  );

  it("range records: negative counts are quarantined too; a non-integer count keeps its message", async () => {
    const { records, quarantined } = await parsedOf(operation("range.sql"), {
      total: 3,
      records: [
        { hash: 1, dbcHash: 2, count_total: 5 },
        { hash: 1, dbcHash: 3, count_total: 5, count_error: -2 },
        { hash: 1, dbcHash: 4, count_total: "12," },
      ],
    });
    expect(records).toHaveLength(1);
    expect(quarantined.map((q) => q.reason)).toEqual([
      "count_error: expected a count, never negative, got -2",
      'count_total: expected an integer, got "12,"',
    ]);
  });
});
