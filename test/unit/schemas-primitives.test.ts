// The quirk primitives and the snake_case record rule, value by value.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  anyTime,
  bool,
  epochMs,
  epochMsOrZero,
  int,
  int32,
  isoUtc,
  javaDate,
  long,
  lower,
  num,
  oidList,
  pcode,
} from "../../src/kernel/primitives.ts";
import { opt, outputKeys, recordSchema, snakeCase } from "../../src/kernel/record.ts";
import { parseJson } from "../../src/schemas/json.ts";

const ok = <T>(schema: z.ZodType<T>, input: unknown): T => schema.parse(input);
const issue = (schema: z.ZodType, input: unknown): string => {
  const result = schema.safeParse(input);
  expect(result.success, `expected ${JSON.stringify(String(input))} to be rejected`).toBe(false);
  return result.error!.issues[0]!.message;
};

describe("numbers", () => {
  it("coerces numeric strings, keeps numbers", () => {
    expect(ok(num, "600.0")).toBe(600);
    expect(ok(num, "93.07")).toBe(93.07);
    expect(ok(num, " 7 ")).toBe(7);
    expect(ok(num, "4.5187527E-4")).toBeCloseTo(0.00045187527, 12);
    expect(ok(num, -12.5)).toBe(-12.5);
  });

  it('rejects the docs\' YAML slips "0," and "44," and other junk, naming the value', () => {
    expect(issue(num, "0,")).toBe('expected a number, got "0,"');
    expect(issue(num, "44,")).toContain('"44,"');
    for (const bad of ["", "abc", "1.2.3", "NaN", null, undefined, true, [1], Number.NaN]) issue(num, bad);
  });

  it("names a refused value that holds exact 64-bit integers instead of throwing on it", () => {
    expect(issue(num, [6068699991557528332n, 1])).toBe('expected a number, got ["6068699991557528332n",1]');
  });

  it("int accepts integral values only; pcode is an int beyond 2^31", () => {
    expect(ok(int, "7")).toBe(7);
    expect(ok(int, "600.0")).toBe(600);
    issue(int, "1.5");
    expect(ok(pcode, "7")).toBe(7);
    expect(ok(pcode, 7)).toBe(7);
    expect(ok(pcode, 3000000079)).toBe(3000000079);
  });

  it("int32 keeps negative hashes and rejects values outside 32 bits", () => {
    expect(ok(int32, -1811136020)).toBe(-1811136020);
    expect(ok(int32, "-2147483648")).toBe(-(2 ** 31));
    expect(ok(int32, 2147483647)).toBe(2 ** 31 - 1);
    issue(int32, 2147483648);
    issue(int32, -2147483649);
  });

  it("long keeps integers beyond 2^53 exact from string, bigint or number", () => {
    expect(ok(long, "6068699991557528332")).toBe(6068699991557528332n);
    expect(ok(long, 9223372000000000000n)).toBe(9223372000000000000n);
    expect(ok(long, 42)).toBe(42n);
    expect(ok(long, "-5")).toBe(-5n);
    issue(long, "6068699991557528332,");
    issue(long, 1.5);
  });
});

describe("booleans and enums", () => {
  it('accepts true/false and "true"/"false" in any case, nothing else', () => {
    expect(ok(bool, "false")).toBe(false);
    expect(ok(bool, "TRUE")).toBe(true);
    expect(ok(bool, true)).toBe(true);
    expect(issue(bool, "false,")).toContain('"false,"');
    issue(bool, 0);
  });

  it("lower-cases capitalised enumerations", () => {
    expect(ok(lower, "Subscribe")).toBe("subscribe");
    expect(ok(lower, "Critical")).toBe("critical");
    expect(ok(lower, "ON")).toBe("on");
  });
});

describe("times", () => {
  it("reads zone-less ISO text as UTC, with T or a space, and honours an explicit zone", () => {
    expect(ok(isoUtc, "2018-10-19T07:17:03.774")).toEqual(new Date(Date.UTC(2018, 9, 19, 7, 17, 3, 774)));
    expect(ok(isoUtc, "2018-10-19 07:17:03.774")).toEqual(new Date(Date.UTC(2018, 9, 19, 7, 17, 3, 774)));
    expect(ok(isoUtc, "2018-11-18T07:17:31.216Z")).toEqual(new Date(Date.UTC(2018, 10, 18, 7, 17, 31, 216)));
    expect(ok(isoUtc, "2018-11-18T16:17:31+09:00")).toEqual(new Date(Date.UTC(2018, 10, 18, 7, 17, 31)));
    issue(isoUtc, "19/10/2018");
    issue(isoUtc, "2018-13-40T00:00:00");
  });

  it("reads Java Date text with GMT, UTC, an offset, a known abbreviation or an IANA zone", () => {
    const utc = new Date(Date.UTC(2018, 8, 18, 8, 34, 27));
    expect(ok(javaDate, "Tue Sep 18 08:34:27 GMT 2018")).toEqual(utc);
    expect(ok(javaDate, "Tue Sep 18 08:34:27 UTC 2018")).toEqual(utc);
    expect(ok(javaDate, "Tue Sep 18 17:34:27 KST 2018")).toEqual(utc);
    expect(ok(javaDate, "Tue Sep 18 17:34:27 GMT+09:00 2018")).toEqual(utc);
    expect(ok(javaDate, "Tue Sep 18 17:34:27 Asia/Seoul 2018")).toEqual(utc);
    expect(ok(javaDate, "Sat Sep 01 00:00:00 GMT 2018")).toEqual(new Date(Date.UTC(2018, 8, 1)));
    // An ambiguous or unknown zone word is an error, not a guess.
    expect(issue(javaDate, "Tue Sep 18 08:34:27 CST 2018")).toContain("CST");
    issue(javaDate, "2018-09-18");
  });

  it("epoch ms from numbers and digit strings; 0 as 'not yet' where documented", () => {
    expect(ok(epochMs, 1733288325022)).toEqual(new Date(1733288325022));
    expect(ok(epochMs, "1733288325022")).toEqual(new Date(1733288325022));
    expect(issue(epochMs, "1733288350068,")).toContain("epoch");
    expect(ok(epochMsOrZero, 0)).toBeNull();
    expect(ok(epochMsOrZero, 5)).toEqual(new Date(5));
  });

  it("anyTime accepts each documented form", () => {
    const t = new Date(Date.UTC(2018, 8, 18, 8, 34, 27));
    expect(ok(anyTime, t.getTime())).toEqual(t);
    expect(ok(anyTime, "2018-09-18T08:34:27")).toEqual(t);
    expect(ok(anyTime, "Tue Sep 18 08:34:27 GMT 2018")).toEqual(t);
    issue(anyTime, "yesterday");
  });
});

describe("oid lists", () => {
  it("parses a string holding a list, or a real list", () => {
    expect(ok(oidList, "[-1459620666]")).toEqual([-1459620666]);
    expect(ok(oidList, "[1, -2,3]")).toEqual([1, -2, 3]);
    expect(ok(oidList, "[]")).toEqual([]);
    expect(ok(oidList, [5, "6"])).toEqual([5, 6]);
    issue(oidList, "-1459620666");
    issue(oidList, "[1,,2]");
  });
});

describe("snake_case record rule", () => {
  it("maps API field names to snake_case", () => {
    const cases: Record<string, string> = {
      serviceHash: "service_hash",
      HostHash: "host_hash",
      Service_hash: "service_hash",
      UrlHash: "url_hash",
      Stdev: "stdev",
      "agent.version": "agent_version",
      cpuCores: "cpu_cores",
      timeSum: "time_sum",
      class: "class",
      snapSeq: "snap_seq",
      dbcHash: "dbc_hash",
      sqlHash: "sql_hash",
      msgHash: "msg_hash",
      eventTime: "event_time",
      projectCode: "project_code",
      time_max: "time_max",
      interval_sec: "interval_sec",
      "os.status": "os_status",
      memory_pused: "memory_pused",
    };
    for (const [api, column] of Object.entries(cases)) expect(snakeCase(api), api).toBe(column);
  });

  const schema = recordSchema({ HostHash: int32, "agent.version": opt(z.string()), apiToken: opt(z.string()) }, { drop: ["apiToken"] });

  it("keeps unknown fields in extra under their original key, nulls absent optionals, drops credentials", () => {
    const out = schema.parse({ HostHash: "-5", apiToken: "secret", process: 0, triggerId: null });
    expect(out).toEqual({ host_hash: -5, agent_version: null, extra: { process: 0, triggerId: null } });
    expect(schema.parse({ HostHash: 1 }).extra).toEqual({});
    expect(outputKeys({ HostHash: int32, "agent.version": int }, [])).toEqual(["host_hash", "agent_version", "extra"]);
  });

  it("reports field path and problem", () => {
    const result = schema.safeParse({ HostHash: "0," });
    expect(result.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["HostHash", 'expected a signed 32-bit integer, got "0,"'],
    ]);
  });

  it("refuses a shape whose fields collide after snake_casing", () => {
    expect(() => recordSchema({ serviceHash: int, service_hash: int })).toThrow(/service_hash/);
    expect(() => recordSchema({ extra: int })).toThrow(/extra/);
  });
});

describe("parseJson", () => {
  it("keeps integers beyond 2^53 exact and long double fractions as numbers", async () => {
    const { parseJson } = await import("../../src/schemas/json.ts");
    expect(parseJson('{"a":0.12345678901234567,"b":9223372036854775807,"c":-9007199254740993}')).toEqual({
      a: Number("0.12345678901234567"),
      b: 9223372036854775807n,
      c: -9007199254740993n,
    });
    expect(parseJson('{"a":0.12345678901234567,"t":1795000000000}')).toEqual({ a: Number("0.12345678901234567"), t: 1795000000000 });
  });
});

describe("parseJson", () => {
  it("keeps integers beyond 2^53 exact wherever a number can stand", () => {
    expect(parseJson("12345678901234567890")).toBe(12345678901234567890n);
    expect(parseJson("[1, 12345678901234567890]")).toEqual([1, 12345678901234567890n]);
    expect(parseJson('{"a" :\n  -12345678901234567890}')).toEqual({ a: -12345678901234567890n });
    expect(parseJson('{"a":1,"b":12345678901234567890}')).toEqual({ a: 1, b: 12345678901234567890n });
  });

  it("leaves long digit runs inside strings, long fractions and safe integers as they are", () => {
    expect(parseJson('{"errorSnapId":"5815897978084376338","n":3}')).toEqual({ errorSnapId: "5815897978084376338", n: 3 });
    expect(parseJson('{"msg":"id:12345678901234567890"}')).toEqual({ msg: "id:12345678901234567890" });
    expect(parseJson("[0.12345678901234566, 9007199254740991]")).toEqual([0.12345678901234566, 9007199254740991]);
  });
});
