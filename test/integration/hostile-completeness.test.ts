// Property (issue 21 item 3): whatever lie the sandbox tells (count lies, empty 200s, echoes of
// another window, impossible totals), on any share of the requests, under `backfill` or `sync`,
// the ledger never says `done` for data that did not arrive. Checked against the sandbox's ground
// truth window by window; the watermark never passes what was not written; the ledger's request
// counts equal the sandbox's request log; once the server is honest again, the next run lands the
// whole truth. Cases come from a seeded generator, so a failure names a case that can be re-run.
import { afterEach, describe, expect, it } from "vitest";
import type { JobResult } from "../../src/engine/run.ts";
import type { JobRequest } from "../../src/engine/types.ts";
import type { HostileMode } from "../../src/sandbox/index.ts";
import { mulberry32 } from "../../src/sandbox/rng.ts";
import { alignDown } from "../../src/windows/grid.ts";
import {
  compareWithTruth,
  DAY,
  dbCountsByKey,
  type EngineHarness,
  HOUR,
  ledgerRows,
  ledgerViolations,
  MINUTE,
  mapDiff,
  startEngineHarness,
} from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 2, 10, 0, 0);
const START = NOW - DAY;
const STREAMS = ["stat.transaction", "stat.remote", "range.sql"];
const LIES: readonly HostileMode[] = [
  "count-lie",
  "empty-body",
  "null-body",
  "array-body",
  "string-body",
  "echo-short",
  "echo-late-start",
  "echo-earlier",
  "echo-later",
  "total-below-retrieved",
  "negative-total",
];

interface Case {
  readonly seed: number;
  readonly lies: HostileMode[];
  readonly rate: number;
  readonly mode: "sync" | "backfill";
}

/** Every lie once, then mixes of two; rate and mode drawn from the seed. */
function cases(): Case[] {
  const out: Case[] = [];
  for (let seed = 1; seed <= LIES.length + 4; seed++) {
    const random = mulberry32(seed);
    const pick = () => LIES[Math.floor(random() * LIES.length)]!;
    const lies = seed <= LIES.length ? [LIES[seed - 1]!] : [pick(), pick()];
    const rate = [0.3, 0.6, 1][Math.floor(random() * 3)]!;
    out.push({ seed, lies: [...new Set(lies)], rate, mode: random() < 0.5 ? "sync" : "backfill" });
  }
  return out;
}

const job = (c: Case): JobRequest =>
  c.mode === "sync"
    ? { command: "sync", mode: { kind: "sync" }, streams: STREAMS }
    : { command: "backfill", mode: { kind: "backfill", from: START, to: NOW - HOUR }, streams: STREAMS };

/** Ledger rows `done`: exactly the truth of their window. Truncated: the truth's total stated, less stored. */
async function doneMeansComplete(h: EngineHarness, pcode: number): Promise<string[]> {
  const bad: string[] = [];
  for (const l of await ledgerRows(h.sql)) {
    const where = `${l.stream} ${new Date(l.start).toISOString()}..${new Date(l.end).toISOString()} ${l.status}`;
    if (l.status === "failed") continue;
    const truth = h.truth.countsByKey(pcode, l.stream, l.start, l.end);
    if (l.status === "truncated") {
      if (l.expectedTotal !== h.truth.total(pcode, l.stream, l.start, l.end) || l.rowsFetched >= l.expectedTotal)
        bad.push(`${where}: expected ${l.expectedTotal}, fetched ${l.rowsFetched}`);
      continue;
    }
    const diff = mapDiff(await dbCountsByKey(h.sql, l.stream, pcode, l.start, l.end), truth);
    if (diff.length > 0) bad.push(`${where}: ${diff.join("; ")}`);
  }
  return bad;
}

/** Per stream and hour: the ledger's requests equal the requests the sandbox saw (hours with a ledger row). */
async function requestsMatchLog(h: EngineHarness): Promise<string[]> {
  const rows = await h.sql<{ stream: string; s: number; requests: number }[]>`
    SELECT stream, (extract(epoch from window_start) * 1000)::float8 AS s, requests FROM sync_windows`;
  const ledger = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.stream} ${alignDown(r.s, HOUR)}`;
    ledger.set(key, (ledger.get(key) ?? 0) + r.requests);
  }
  const log = new Map<string, number>();
  for (const e of h.sandbox.requestLog) {
    if (e.opId === null || e.stime === null) continue;
    const key = `${e.opId} ${alignDown(e.stime, HOUR)}`;
    log.set(key, (log.get(key) ?? 0) + 1);
  }
  return [...ledger].filter(([k, n]) => log.get(k) !== n).map(([k, n]) => `${k}: ledger ${n}, sandbox ${log.get(k) ?? 0}`);
}

let h: EngineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("a lying server never gets a window recorded done for data it did not send", () => {
  it.each(cases().map((c) => [`seed ${c.seed}: ${c.lies.join("+")} on ${c.rate * 100}% of requests, ${c.mode}`, c] as const))(
    "%s",
    async (_name, c) => {
      h = await startEngineHarness({
        now: NOW,
        burstKeys: 0,
        projects: 1,
        seed: c.seed,
        env: { APM_START: new Date(START).toISOString(), APM_RETRIES: "2" },
      });
      const pcode = h.pcodes[0]!;
      h.sandbox.setHostile({ modes: c.lies, rate: c.rate, ops: STREAMS });
      const t0 = performance.now();
      const lied: JobResult = await h.run(job(c));
      const ms = performance.now() - t0;
      const lies = h.sandbox.requestLog.filter((e) => e.hostile !== undefined).length;
      expect(lies).toBeGreaterThan(0);
      expect(await doneMeansComplete(h, pcode)).toEqual([]);
      expect(await ledgerViolations(h.sql, STREAMS, START)).toEqual([]);
      expect(await requestsMatchLog(h)).toEqual([]);
      // The summary counts every request sent, deferred and failed windows included.
      const summed = [...lied.streams.values()].reduce((n, s) => n + s.requests, 0);
      expect(summed).toBe(h.sandbox.requestLog.filter((e) => e.opId !== null).length);
      // Bounded: a lie costs retries and splits, never a hang.
      expect(ms).toBeLessThan(60_000);

      // Honest again: the next run of the same kind lands the truth (truncated windows are
      // marked, and only a backfill re-fetches them).
      h.sandbox.setHostile(null);
      const healed = await h.run(job(c));
      expect(healed.exitCode, h.logs.slice(-5).join("\n")).toBe(0);
      expect(await doneMeansComplete(h, pcode)).toEqual([]);
      const ledger = await ledgerRows(h.sql);
      expect(ledger.filter((l) => l.status === "failed")).toEqual([]);
      const end = c.mode === "sync" ? alignDown(NOW - 10 * MINUTE, 5 * MINUTE) : NOW - HOUR;
      for (const op of STREAMS) {
        const { diff, truthKeys } = await compareWithTruth(h, op, pcode, START, end);
        expect({ op, diff }).toEqual({ op, diff: [] });
        expect(truthKeys).toBeGreaterThan(0);
        // Covered from start to end, nothing missing.
        let at = START;
        for (const l of ledger.filter((x) => x.stream === op)) if (l.start <= at && l.end > at) at = l.end;
        expect({ op, coveredTo: new Date(at).toISOString() }).toEqual({ op, coveredTo: new Date(end).toISOString() });
      }
    },
    120_000,
  );
});
