// The COPY text encoder (the binary writer's fallback): each value as Postgres reads it back.
import { describe, expect, it } from "vitest";
import { tableInfo } from "../../src/db/tables.ts";
import { copyEncoder, copyEscape } from "../../src/db/write/copyText.ts";

describe("COPY text encoding", () => {
  it("escapes backslash, newline, carriage return and tab", () => {
    expect(copyEscape("a\\b\nc\rd\te")).toBe("a\\\\b\\nc\\rd\\te");
    expect(copyEscape("plain")).toBe("plain");
  });

  it("encodes each column by its type, null as \\N, constants once in front", () => {
    const info = tableInfo("stat_transaction");
    const encode = copyEncoder(info, ["service_hash", "service", "count", "time_avg", "extra"], {
      constants: { pcode: 3000000001, window_start: 0 },
      tally: { replaced: 0 },
    });
    const text = encode([
      { service_hash: -5, service: "/a\tb", count: 3, time_avg: 1.5e-7, extra: { big: 2n ** 64n, s: "x\ny" } },
      { service_hash: 9, service: null, count: undefined, time_avg: 2, extra: {} },
    ]);
    expect(text).toBe(
      '3000000001\t1970-01-01T00:00:00.000Z\t-5\t/a\\tb\t3\t1.5e-7\t{"big":18446744073709551616,"s":"x\\\\ny"}\n' +
        "3000000001\t1970-01-01T00:00:00.000Z\t9\t\\N\t\\N\t2\t{}\n",
    );
  });

  it("writes times from epoch ms or Date, arrays as array literals, Dates in text columns as ISO", () => {
    const monthly = copyEncoder(tableInfo("visitors_monthly"), ["month_start", "sdate"], { tally: { replaced: 0 } });
    expect(monthly([{ month_start: Date.UTC(2026, 0, 1), sdate: new Date(Date.UTC(2026, 0, 1)) }])).toBe(
      "2026-01-01T00:00:00.000Z\t2026-01-01T00:00:00.000Z\n",
    );
    const errors = copyEncoder(tableInfo("stat_error"), ["oids", "onames"], { tally: { replaced: 0 } });
    expect(errors([{ oids: [1, -2], onames: ['a"b', "c\\d", null] }])).toBe('{1,-2}\t{"a\\\\"b","c\\\\\\\\d",NULL}\n');
  });

  it("refuses a column type it cannot encode", () => {
    // Every type of the warehouse has one: a table with a type it has not.
    const info = tableInfo("sync_runs");
    const uuid = { ...info, types: new Map([...info.types, ["id", "uuid"]]) };
    expect(() => copyEncoder(uuid, ["id"], { tally: { replaced: 0 } })).toThrow(/sync_runs\.id: no COPY encoding for type uuid/);
  });

  it("writes text the database cannot hold as U+FFFD, the original in extra._original, and counts it", () => {
    const tally = { replaced: 0 };
    const encode = copyEncoder(tableInfo("stat_transaction"), ["service", "extra"], { tally });
    expect(
      encode([
        { service: "a\u0000b", extra: { k: "v" } },
        { service: "ok", extra: {} },
      ]),
    ).toBe('a\uFFFDb\t{"k":"v","_original":{"service":"a\\\\\\\\u0000b"}}\nok\t{}\n');
    expect(tally.replaced).toBe(1);
  });
});
