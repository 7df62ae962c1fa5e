// Progress names the calls a run is waiting on (operation, window, seconds), not `0/0`.
import type { DestinationStream } from "pino";
import { describe, expect, it } from "vitest";
import { describeCall, type PendingCall } from "../../src/api/pending.ts";
import { logProgress, SLOW_CALL_MS, slowCalls } from "../../src/engine/progress.ts";
import { createLogger } from "../../src/util/logger.ts";

const T = Date.UTC(2026, 2, 9, 14, 0);

describe("slow calls", () => {
  it("are named with operation, project, window and seconds, the slowest first", () => {
    const now = 100_000;
    const calls: PendingCall[] = [
      { what: describeCall("stat.sql", 1001, { stime: T, etime: T + 3_600_000 }), since: now - 42_000 },
      { what: describeCall("range.sql", 1001, { stime: T, etime: T + 300_000 }), since: now - 5_000 },
      { what: "the server-clock probe (GET of the base URL)", since: now - 95_000 },
    ];
    expect(slowCalls(() => calls, 3, now)).toBe(
      "the server-clock probe (GET of the base URL) for 95 s, stat.sql pcode=1001 2026-03-09T14:00Z..15:00Z for 42 s",
    );
    expect(slowCalls(() => calls, 1, now)).toBe("the server-clock probe (GET of the base URL) for 95 s");
    expect(slowCalls(undefined, 3, now)).toBe("");
    expect(SLOW_CALL_MS).toBe(10_000);
  });

  it("a run waiting before any window is planned says on what, instead of 0/0", async () => {
    const lines: string[] = [];
    const destination: DestinationStream = { write: (s: string) => void lines.push(s.trimEnd()) };
    const logger = createLogger({ level: "info", format: "plain", destination });
    const since = performance.now() - 30_000;
    const sink = logProgress(logger, 20, () => [{ what: "the server-clock probe (GET of the base URL)", since }]);
    await new Promise((r) => setTimeout(r, 70));
    sink.planned("stat.sql", 4);
    await new Promise((r) => setTimeout(r, 50));
    sink.stop();
    expect(
      lines.some((l) => /progress: no window planned yet; waiting on the server-clock probe \(GET of the base URL\) for 3\d s/.test(l)),
    ).toBe(true);
    expect(lines.some((l) => /progress: 0\/4 windows.*; waiting on the server-clock probe/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes("0/0"))).toBe(false);
  });
});

describe("the progress line", () => {
  /** The line `stop()` prints after the events, as a plain log line. */
  const lastLine = async (events: (sink: ReturnType<typeof logProgress>) => void, stopping?: AbortSignal): Promise<string> => {
    const lines: string[] = [];
    const destination: DestinationStream = { write: (s: string) => void lines.push(s.trimEnd()) };
    const sink = logProgress(createLogger({ level: "info", format: "plain", destination }), 60_000, undefined, stopping);
    events(sink);
    // Some time passes, so that a rate and an ETA exist.
    await new Promise((r) => setTimeout(r, 20));
    sink.stop();
    return lines.at(-1) ?? "";
  };

  it("gives no ETA while streams are still being planned (the total may grow), then one", async () => {
    const planning = await lastLine((sink) => {
      sink.planned("stat.sql", 4);
      sink.windowDone("stat.sql", 10);
    });
    expect(planning).toMatch(/progress: 1\/4 windows, 10 rows/);
    expect(planning).not.toContain("ETA");
    const planned = await lastLine((sink) => {
      sink.planned("stat.sql", 4);
      sink.allPlanned();
      sink.windowDone("stat.sql", 10);
    });
    expect(planned).toMatch(/progress: 1\/4 windows, 10 rows, \d+ rows\/s, ETA \d+s/);
  });

  it("counts a failed window as failed, not only as done", async () => {
    const line = await lastLine((sink) => {
      sink.planned("stat.sql", 3);
      sink.allPlanned();
      sink.windowDone("stat.sql", 5);
      sink.windowFailed("stat.sql");
    });
    expect(line).toMatch(/progress: 2\/3 windows, 1 failed, 5 rows/);
  });

  it("after a signal says stopped, with what was done and what is left, never a finished count with ETA 0s", async () => {
    const signal = new AbortController();
    // As a run does: 10 windows planned, 3 done, the signal, then the 7 not fetched leave the plan.
    const run = (sink: ReturnType<typeof logProgress>, stop: boolean) => {
      sink.planned("stat.sql", 6);
      sink.planned("range.sql", 4);
      sink.allPlanned();
      sink.windowDone("stat.sql", 5);
      sink.windowDone("stat.sql", 5);
      sink.windowFailed("range.sql");
      if (stop) signal.abort();
      sink.planned("stat.sql", -4);
      sink.planned("range.sql", -3);
    };
    const stopped = await lastLine((sink) => run(sink, true), signal.signal);
    expect(stopped).toMatch(/progress: stopped by a signal: 3 windows done, 1 failed, 7 left for the next run, 10 rows, \d+ rows\/s /);
    // Without the signal (windows a refused token stopped): the plain count, as before.
    const shrunk = await lastLine((sink) => run(sink, false), new AbortController().signal);
    expect(shrunk).toMatch(/progress: 3\/3 windows, 1 failed, 10 rows, \d+ rows\/s, ETA 0s /);
  });

  it("once the windows are done, counts the rollups' refresh in days (issue 38), not a frozen `2/2 windows ... ETA 0s`", async () => {
    const fetched = (sink: ReturnType<typeof logProgress>) => {
      sink.planned("stat.sql", 2);
      sink.allPlanned();
      sink.windowDone("stat.sql", 5);
      sink.windowDone("stat.sql", 5);
      sink.refreshing(0, 10);
      sink.refreshing(3, 10);
    };
    expect(await lastLine(fetched)).toMatch(/progress: refreshing rollups: 3\/10 days \(2\/2 windows\), 10 rows, \d+ rows\/s, ETA \d+s /);
    const done = await lastLine((sink) => {
      fetched(sink);
      sink.refreshing(10, 10);
    });
    expect(done).toMatch(/progress: rollups refreshed: 10\/10 days \(2\/2 windows\), 10 rows, \d+ rows\/s, ETA 0s /);
    const signal = new AbortController();
    const stopped = await lastLine((sink) => {
      fetched(sink);
      signal.abort();
    }, signal.signal);
    expect(stopped).toMatch(
      /progress: stopped by a signal: 2 windows done, 0 left for the next run, rollups refreshed 3\/10 days, the rest next run, 10 rows, \d+ rows\/s /,
    );
    // A run with no window to fetch (a backfill the ledger has complete) still shows its refresh.
    expect(await lastLine((sink) => sink.refreshing(1, 4))).toMatch(/progress: refreshing rollups: 1\/4 days \(0\/0 windows\)/);
  });
});
