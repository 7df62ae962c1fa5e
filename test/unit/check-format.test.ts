// The pure parts of `check`: which window a probe asks for, how the clock and the table read.
import { describe, expect, it } from "vitest";
import { clockText, formatCheck } from "../../src/check/format.ts";
import type { ProbeResult } from "../../src/check/probe.ts";
import { probeWindow } from "../../src/check/run-check.ts";
import { testApiConfig } from "../support/http-server.ts";

const MIN = 60_000;
const T = Date.UTC(2026, 4, 4, 9, 52, 17, 300);

describe("check", () => {
  it("asks for the latest settled 5-minute window on the server's clock", () => {
    expect(probeWindow(T, 10 * MIN)).toEqual({ start: Date.UTC(2026, 4, 4, 9, 35), end: Date.UTC(2026, 4, 4, 9, 40) });
    expect(probeWindow(Date.UTC(2026, 4, 4, 9, 50), 0)).toEqual({ start: Date.UTC(2026, 4, 4, 9, 45), end: Date.UTC(2026, 4, 4, 9, 50) });
  });

  it("reads the clock offset as a person would say it", () => {
    expect(clockText(null)).toMatch(/^unknown/);
    expect(clockText(-3 * 3_600_000 - 212)).toBe("-3h 0m 0.2s (behind ours; offset -10800212 ms)");
    expect(clockText(90_500)).toBe("+1m 30.5s (ahead of ours; offset 90500 ms)");
    expect(clockText(-40)).toContain("in step with ours");
  });

  it("prints one line per probe, drift compactly, and identical failures of a project once", () => {
    const base = { partition: null, token: null, httpStatus: null, records: null, ms: null, drift: null };
    const auth = {
      ...base,
      pcode: 7,
      status: "auth" as const,
      httpStatus: 401,
      message: "refused (HTTP 401): check the token of project 7",
    };
    const operations: ProbeResult[] = [
      {
        ...base,
        id: "stat.sql",
        pcode: 5,
        status: "ok",
        token: "project",
        httpStatus: 200,
        records: 3,
        ms: 12,
        message: null,
        drift: { unknownFields: ["newField", "other"], quarantined: 1, firstReason: "count: expected a number" },
      },
      { ...auth, id: "scalar.tps" },
      { ...auth, id: "scalar.cpu" },
    ];
    const window = { start: T, end: T + 5 * MIN };
    const text = formatCheck(
      { ok: false, serverClockOffsetMs: 0, headers: { token: "x-t", pcode: "x-p" }, window, operations },
      testApiConfig("http://u:pw@h:1"),
    );
    expect(text).toMatch(
      /^stat\.sql\s+5\s+ok\s+project\s+200\s+3\s+12 drift: \+newField,\+other; 1 quarantined \(count: expected a number\)$/m,
    );
    expect(text).toContain("project 7: 2 operations auth: refused (HTTP 401): check the token of project 7");
    expect(text).toContain("server: http://h:1\n");
    expect(text).toContain("1 ok, 2 auth, 0 not-found, 0 error, 0 skipped: fix what the notes say");
  });
});
