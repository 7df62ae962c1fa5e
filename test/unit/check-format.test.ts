// The pure parts of `check`: which window a probe asks for, how the clock and the table read.
import { describe, expect, it } from "vitest";
import { baseUrlAdvice } from "../../src/check/advice.ts";
import { checkJson, clockText, formatCheck } from "../../src/check/format.ts";
import type { ProbeResult } from "../../src/check/probe.ts";
import { probeWindow } from "../../src/check/run-check.ts";
import { selectOperations } from "../../src/engine/targets.ts";
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
      { ok: false, serverClockOffsetMs: 0, headers: { token: "x-t", pcode: "x-p" }, window, operations, advice: [] },
      testApiConfig("http://u:pw@h:1"),
    );
    expect(text).toMatch(
      /^stat\.sql\s+5\s+ok\s+project\s+200\s+3\s+12 drift: \+newField,\+other; 1 quarantined \(count: expected a number\)$/m,
    );
    expect(text).toContain("project 7: 2 operations auth: refused (HTTP 401): check the token of project 7");
    expect(text).toContain("server: http://h:1\n");
    expect(text).toContain("1 ok, 2 auth, 0 not-found, 0 error, 0 skipped: fix what the notes say");
  });

  it("escapes the control characters of what the server sent (keys, reasons, messages); --json keeps them, escaped as JSON", () => {
    const base = { partition: null, token: null, httpStatus: null, records: null, ms: null, drift: null };
    const keys = ["t\u001b]0;pwned\u0007", "c\u009b2J", "n\nFAKE line", "d\u007f"];
    const operations: ProbeResult[] = [
      {
        ...base,
        id: "stat.sql",
        pcode: 5,
        status: "ok",
        httpStatus: 200,
        records: 1,
        ms: 1,
        message: null,
        drift: { unknownFields: keys, quarantined: 1, firstReason: 'count: got "\u009b6n"' },
      },
      { ...base, id: "scalar.tps", pcode: 6, status: "error", message: "HTTP 500: \u001b[2Jboom" },
      { ...base, id: "scalar.cpu", pcode: 6, status: "error", message: "HTTP 500: \u001b[2Jboom" },
    ];
    const report = {
      ok: false,
      serverClockOffsetMs: 0,
      headers: { token: "x-t", pcode: "x-p" },
      window: { start: T, end: T + 5 * MIN },
      operations,
      advice: [],
    };
    const text = formatCheck(report, testApiConfig("http://h:1"));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: none may be printed
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('+t\\u001b]0;pwned\\u0007,+c\\u009b2J,+n\\u000aFAKE line,+d\\u007f; 1 quarantined (count: got "\\u009b6n")');
    expect(text).toContain("project 6: 2 operations error: HTTP 500: \\u001b[2Jboom");
    const json = checkJson(report);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: nor in the JSON text
    expect(json).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(
      (JSON.parse(json) as { operations: { drift: { unknownFields: string[] } | null }[] }).operations[0]!.drift!.unknownFields,
    ).toEqual(keys);
    expect(JSON.parse(checkJson(report, true))).toEqual(JSON.parse(json));
  });

  it("blames the base URL when its path repeats the operations' paths, or when every probe answered 404", () => {
    const ops = selectOperations(null);
    const base = { pcode: 5, partition: null, token: null, records: null, ms: null, drift: null };
    const notFound: ProbeResult = { ...base, id: "scalar.tps", status: "not-found", httpStatus: 404, message: "x" };
    const statNotFound: ProbeResult = { ...notFound, id: "stat.sql" };
    const ok: ProbeResult = { ...base, id: "stat.sql", status: "ok", httpStatus: 200, message: null };
    for (const url of ["http://u:pw@h:1/open/api", "http://h:1/open/api/", "http://h:1/open"])
      expect(baseUrlAdvice(url, ops, [ok])).toMatch(/^APM_BASE_URL has the path \/open(\/api)?, .*: set APM_BASE_URL to http:\/\/h:1$/);
    expect(baseUrlAdvice("http://h:1/apm", ops, [notFound, notFound])).toBe(
      "every operation answered 404: APM_BASE_URL is the server's root, without a path; try APM_BASE_URL=http://h:1",
    );
    expect(baseUrlAdvice("http://h:1", ops, [notFound, notFound])).toMatch(
      /^every operation answered 404: is http:\/\/h:1 the Open API server\?/,
    );
    // A path of a reverse proxy that serves the API under it, or a single missing operation: nothing to say.
    expect(baseUrlAdvice("http://h:1/apm", ops, [ok, notFound])).toBeNull();
    expect(baseUrlAdvice("http://h:1", ops, [notFound])).toBeNull();
    // Only operations whose path the spec leaves open: their overrides are the advice.
    expect(baseUrlAdvice("http://h:1", ops, [statNotFound, statNotFound])).toBeNull();
  });

  it("prints the advice for the whole run last, after the verdict", () => {
    const window = { start: T, end: T + 5 * MIN };
    const report = {
      ok: false,
      serverClockOffsetMs: null,
      headers: { token: "x-t", pcode: "x-p" },
      window,
      operations: [],
      advice: ["set it"],
    };
    const text = formatCheck(report, testApiConfig("http://h:1"));
    expect(text.trimEnd().split("\n").slice(-2)).toEqual([
      "0 ok, 0 auth, 0 not-found, 0 error, 0 skipped: fix this first, then run check again:",
      "=> set it",
    ]);
  });
});
