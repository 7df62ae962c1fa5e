// Faults (issue 4): (1) with the sandbox answering 10% of requests with a fault of every kind
// (429, 5xx, reset, stall, truncated JSON, HTML, 200 with an error body), ONE run of the real CLI
// still reaches the ground truth: the retries inside the run cope. (2) With one stream failing
// for good (its path overridden to one the server does not know: 404 every time), the other
// streams finish with correct data, the CLI exits 1, the ledger holds the failed windows, and
// `apm-sync status --json` names them.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FAULT_KINDS } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { compareWithTruth, DAY, type EngineHarness, ledgerRows, ledgerViolations, startEngineHarness } from "../support/engine-harness.ts";

const CAP = 300;
const BURST = 400;
const NOW = Date.UTC(2026, 0, 10);
const FROM = Date.UTC(2026, 0, 7);
const TO = FROM + DAY;
const STATS = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"];
const RANGES = ["range.exception", "range.httpc", "range.sql", "range.remote", "range.transaction"];
const STREAMS = [...STATS, ...RANGES];
const backfill = ["backfill", "--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];

let h: EngineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function harness(): Promise<EngineHarness> {
  h = await startEngineHarness({ now: NOW, maxRecords: CAP, burstKeys: BURST, projects: 1 });
  return h;
}

/** Per stream: Postgres sums per key equal the ground truth (truncated burst cubes left out). */
async function truthDiffs(hh: EngineHarness, streams: readonly string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const opId of streams) out[opId] = (await compareWithTruth(hh, opId, hh.pcodes[0]!, FROM, TO)).diff;
  return out;
}

const none = (streams: readonly string[]) => Object.fromEntries(streams.map((s) => [s, []]));

describe("faults", () => {
  it("10% mixed faults (every kind, stalls included): one run reaches the ground truth", async () => {
    const hh = await harness();
    hh.sandbox.setFaults(0.1, [...FAULT_KINDS]);
    // A stall holds the request without answering: the 2 s deadline turns it into a retryable timeout.
    const env = cliEnv({
      baseUrl: hh.sandbox.url,
      databaseUrl: hh.db.url,
      projects: hh.sandbox.projects,
      extra: { APM_START: backfill[2]!, APM_RETRIES: "10", APM_TIMEOUT: "2s" },
    });
    const exit = await runCli(backfill, env);
    const faults = hh.sandbox.requestLog.filter((e) => e.fault !== undefined);
    const kinds = new Set(faults.map((e) => e.fault));
    process.stderr.write(
      `engine-faults: ${hh.sandbox.requestLog.length} requests, ${faults.length} faults (${[...kinds].join(", ")}), ${exit.durationMs} ms\n`,
    );
    const failures = exit.stderr.split("\n").filter((l) => / failed: /.test(l));
    expect({ code: exit.code }, `${exit.stdout}\n${failures.join("\n")}`).toEqual({ code: 0 });
    // The faults really happened, of every kind.
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
    expect(faults.length / hh.sandbox.requestLog.length).toBeGreaterThan(0.05);
    expect(await ledgerRows(hh.sql, { status: "failed" })).toEqual([]);
    expect(await ledgerViolations(hh.sql, STREAMS, FROM)).toEqual([]);
    expect(await truthDiffs(hh, STREAMS)).toEqual(none(STREAMS));
  });

  it("a stream that always fails: the others finish, exit 1, the ledger and `status --json` name its windows", async () => {
    const hh = await harness();
    const dir = mkdtempSync(join(tmpdir(), "apm-faults-"));
    const config = join(dir, "config.json");
    // stat.sql's path is configurable (not published): point it where the server answers 404.
    writeFileSync(config, JSON.stringify({ overrides: { "stat.sql": { path: "/open/api/v2/stat/no-such-type" } } }));
    const env = cliEnv({
      baseUrl: hh.sandbox.url,
      databaseUrl: hh.db.url,
      projects: hh.sandbox.projects,
      extra: { APM_START: backfill[2]!, APM_CONFIG: config },
    });
    const exit = await runCli(backfill, env);
    process.stderr.write(`engine-faults: run with a failing stream took ${exit.durationMs} ms\n`);
    expect({ code: exit.code }, exit.stderr.slice(-3000)).toEqual({ code: 1 });
    expect(exit.stdout).toMatch(/^stat\.sql\s.*FAILED 24/m);

    const failed = await ledgerRows(hh.sql, { status: "failed" });
    const pcode = hh.pcodes[0]!;
    // Every hourly window of stat.sql failed, nothing else did.
    expect(failed.map((l) => `${l.stream} ${l.pcode} ${l.end - l.start}`)).toEqual(
      Array.from({ length: 24 }, () => `stat.sql ${pcode} ${DAY / 24}`),
    );
    expect(failed.map((l) => l.start)).toEqual(Array.from({ length: 24 }, (_, i) => FROM + (i * DAY) / 24));
    const others = STREAMS.filter((s) => s !== "stat.sql");
    expect(await ledgerViolations(hh.sql, others, FROM)).toEqual([]);
    expect(await truthDiffs(hh, others)).toEqual(none(others));

    const status = await runCli(["status", "--json"], env);
    expect({ code: status.code }, status.stderr).toEqual({ code: 0 });
    const report = JSON.parse(status.stdout) as {
      failed: {
        total: number;
        groups: { error: string; windows: number; streams: string[]; pcodes: number[]; firstStart: string; lastEnd: string }[];
      };
      streams: { pcode: number; stream: string; failedWindows: number }[];
    };
    // The 24 windows failed alike: one group naming the stream, the project and their span.
    expect(report.failed.total).toBe(24);
    expect(report.failed.groups.map((g) => [g.windows, g.streams, g.pcodes, g.firstStart, g.lastEnd])).toEqual([
      [24, ["stat.sql"], [pcode], new Date(failed[0]!.start).toISOString(), new Date(failed.at(-1)!.end).toISOString()],
    ]);
    expect(report.failed.groups.every((g) => /404/.test(g.error))).toBe(true);
    const sqlStatus = report.streams.find((s) => s.stream === "stat.sql" && s.pcode === pcode);
    expect(sqlStatus?.failedWindows).toBe(24);
  });
});
