// `status` from the ledger's answers to the text (issue 19 point 5): totals that add up, identical
// errors once with a count, the configured streams that never ran, each piece of advice once.
// Error texts are made by the real error classes and describeError, as the engine records them.
import { describe, expect, it } from "vitest";
import { AuthError, TransportError } from "../../src/api/errors.ts";
import { loadConfig } from "../../src/config.ts";
import { describeError, splitAdvice } from "../../src/engine/describe-error.ts";
import { formatStatus, humanDuration } from "../../src/report/format-status.ts";
import type { FailureRow, StatusReport, StreamStatus } from "../../src/report/reads/readStatus.ts";
import { expectedStreams, groupFailures, statusModel } from "../../src/report/status-model.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 14);

/** What the ledger holds for `e` once readStatus took the request's location out. */
function ledgerText(e: TransportError | AuthError, line = describeError(e)): string {
  return line.replace(` [${e.opId}${e.pcode !== undefined ? ` (project ${e.pcode})` : ""} ${e.path}]`, "");
}

const refused = (stream: string, pcode: number) =>
  new TransportError(
    "connection failed: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9",
    { opId: stream, pcode, path: `/open/api/v2/stat/x?stime=${T0}`, attempt: 5 },
    { code: "ECONNREFUSED" },
  );

const authFailed = (stream: string, pcode: number) =>
  new AuthError("HTTP 401", { opId: stream, pcode, path: "/open/api/json/x", attempt: 1 }, { status: 401, tokenHeader: "x-service-token" });

function row(stream: string, pcode: number, error: string, windows: number, fromHour = 0): FailureRow {
  return {
    pcode,
    stream,
    error,
    windows,
    firstStart: new Date(T0 + fromHour * HOUR),
    lastEnd: new Date(T0 + (fromHour + windows) * HOUR),
    lastFinishedAt: null,
  };
}

function stream(pcode: number, name: string, failed = 0): StreamStatus {
  return {
    pcode,
    stream: name,
    watermark: new Date(T0),
    lagSeconds: 600,
    lastFinishedAt: null,
    doneWindows: 3,
    failedWindows: failed,
    truncatedWindows: 0,
    quarantinedRecords: 0,
    prunedWindows: 0,
    prunedUntil: null,
  };
}

describe("status", () => {
  it("formats durations", () => {
    expect([0, 59, 60, 3599, 3600, 7500, 200_000].map(humanDuration)).toEqual(["0s", "59s", "1m", "59m", "1h00m", "2h05m", "2d07h"]);
  });

  it("321 windows refused alike over two streams and projects: one line x321 with the span, the true total, advice once", () => {
    const failures = [
      row("stat.sql", 1001, ledgerText(refused("stat.sql", 1001)), 200),
      row("stat.transaction", 1001, ledgerText(refused("stat.transaction", 1001)), 100, 10),
      row("stat.transaction", 1002, ledgerText(refused("stat.transaction", 1002)), 21, 300),
    ];
    const report: StatusReport = {
      streams: [stream(1001, "stat.sql", 200), stream(1001, "stat.transaction", 100), stream(1002, "stat.transaction", 21)],
      failures,
      holes: [],
      lastRun: null,
    };
    const model = statusModel(report, []);
    expect(model.failed.total).toBe(report.streams.reduce((a, s) => a + s.failedWindows, 0));
    expect(model.failed.groups).toHaveLength(1);
    const text = formatStatus(model);
    expect(text).toContain("failed windows: 321 (one error;");
    expect(text).toContain("  x321  connection failed: ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9\n");
    expect(text).toContain("projects 1001, 1002: stat.sql, stat.transaction; windows 2026-11-14 00:00Z .. 2026-11-27 09:00Z");
    // What to check for a host nobody answers on, not "retried next run".
    expect(text.match(/what to do:/g)).toHaveLength(1);
    expect(text).toMatch(/what to do: could not connect: check the host and port of APM_BASE_URL/);
    expect(text).not.toContain("retried next run");
  });

  it("auth failures of many operations of a project: one group, the advice once, also for lines recorded with it twice", () => {
    const old = (op: string) =>
      ledgerText(authFailed(op, 7), `${authFailed(op, 7).message} (check the token and the APM_TOKEN_HEADER/APM_PCODE_HEADER names)`);
    const failures = [row("stat.sql", 7, old("stat.sql"), 1), row("scalar.tps", 7, ledgerText(authFailed("scalar.tps", 7)), 1)];
    const [group, ...rest] = groupFailures(failures);
    expect(rest).toEqual([]);
    expect(group).toMatchObject({ windows: 2, streams: ["scalar.tps", "stat.sql"], pcodes: [7] });
    expect(group!.error).toBe("authentication failed for project 7: HTTP 401");
    expect(group!.advice).toBe(
      'check the token of project 7 and that the header names match the server (token header now "x-service-token")',
    );
    const text = formatStatus(
      statusModel({ streams: [stream(7, "stat.sql", 1), stream(7, "scalar.tps", 1)], failures, holes: [], lastRun: null }, []),
    );
    expect(text.match(/check the token/gi)).toHaveLength(1);
  });

  it("splits the advice describeError appends, and leaves a line without one alone", () => {
    expect(splitAdvice("HTTP 500: oops (network or server problem; the window will be retried next run)")).toEqual({
      error: "HTTP 500: oops",
      advice: "network or server problem; the window will be retried next run",
    });
    expect(splitAdvice("HTTP 404: not here. Check the URL")).toEqual({ error: "HTTP 404: not here. Check the URL", advice: null });
  });

  it("describes a thrown object that is no Error by its own words (a read-only data directory printed [object Object])", () => {
    expect(describeError({ name: "ErrnoError", errno: 2 })).toBe("ErrnoError (errno 2)");
    expect(describeError({ message: "disk full", code: "ENOSPC" })).toBe("disk full (ENOSPC)");
    expect(describeError("plain text")).toBe("plain text");
  });

  it("lists every configured stream of every configured project, those without a window as never run", () => {
    const config = loadConfig({
      env: { APM_PROJECTS: "1001:tok-a,1002:tok-b", APM_STREAMS: "stat.sql,stat.transaction", APM_ACCOUNT_TOKEN: "tok-acc" },
    });
    const { expected, problem } = expectedStreams(config);
    expect(problem).toBeNull();
    // Catalogue order; no account stream is selected.
    expect(expected).toEqual([
      { pcode: 1001, stream: "stat.transaction" },
      { pcode: 1001, stream: "stat.sql" },
      { pcode: 1002, stream: "stat.transaction" },
      { pcode: 1002, stream: "stat.sql" },
    ]);
    const model = statusModel({ streams: [stream(1001, "stat.sql")], failures: [], holes: [], lastRun: null }, expected);
    expect(model.streams.map((s) => [s.pcode, s.stream, s.neverRun])).toEqual([
      [1001, "stat.sql", false],
      [1001, "stat.transaction", true],
      [1002, "stat.sql", true],
      [1002, "stat.transaction", true],
    ]);
    const text = formatStatus(model);
    expect(text).toContain("project 1001 (1 of 2 streams never run)");
    expect(text).toMatch(/^ {2}stat\.transaction\s+never run\s+-\s+-\s+0\s+0\s+0\s+0\s+-$/m);
    expect(text).toContain("project 1002 (2 of 2 streams never run)");
    expect(text).not.toContain("nothing synced yet");
    // Nothing in the ledger at all: every stream never ran, and the next step is said.
    expect(formatStatus(statusModel({ streams: [], failures: [], holes: [], lastRun: null }, expected))).toContain("nothing synced yet");
  });

  it("a selection the catalogue does not know is refused when the configuration is read", () => {
    expect(() => loadConfig({ env: { APM_PROJECTS: "1001:tok-a", APM_STREAMS: "stat.nope" } })).toThrow(
      /APM_STREAMS: unknown stream "stat\.nope"/,
    );
  });

  it("a selection that cannot be read: the ledger alone, and why", () => {
    const problem = "stream range.httpc.filtered needs {host}, {port}";
    const text = formatStatus(statusModel({ streams: [stream(1001, "stat.sql")], failures: [], holes: [], lastRun: null }, [], problem));
    expect(text).toMatch(/^configured streams unknown \(stream range\.httpc\.filtered needs/);
    expect(text).toContain("stat.sql");
  });

  it("holes: one line each with the span, the first 50 in the text with the total, every one in the model (--json)", () => {
    const holes = Array.from({ length: 60 }, (_, i) => ({
      pcode: 1001,
      stream: "stat.sql",
      partition: "",
      start: new Date(T0 + 2 * i * HOUR),
      end: new Date(T0 + (2 * i + 1) * HOUR),
    }));
    const model = statusModel({ streams: [stream(1001, "stat.sql")], failures: [], holes, lastRun: null }, []);
    expect(model.holes).toHaveLength(60);
    const text = formatStatus(model);
    expect(text).toContain(
      "holes in the ledger: 60 (time no window covers between a stream's first and last window, the first 50 listed (all in --json)",
    );
    expect(text.match(/^ {2}project 1001 stat\.sql: /gm)).toHaveLength(50);
    expect(text).toContain("  project 1001 stat.sql: 2026-11-14 00:00Z .. 2026-11-14 01:00Z\n");
    expect(formatStatus(statusModel({ streams: [stream(1001, "stat.sql")], failures: [], holes: [], lastRun: null }, []))).not.toContain(
      "holes",
    );
  });
});
