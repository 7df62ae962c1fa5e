// Completeness (issue 4): a 3-day backfill of 2 projects, every stat type and every range table,
// with a record cap (300) low enough that windows split; per key, the sums in Postgres equal the
// sandbox ground truth exactly, except the burst cubes, which exceed the cap alone and must be
// marked `truncated` with both counts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobResult } from "../../src/engine/run.ts";
import {
  COUNTED_STREAMS,
  CUBE,
  compareWithTruth,
  DAY,
  dbCountsByKey,
  type EngineHarness,
  HOUR,
  type LedgerRow,
  ledgerRows,
  mapDiff,
  startEngineHarness,
  tableOf,
  truthCountsByKey,
  windowViolations,
} from "../support/engine-harness.ts";

const CAP = 300;
// Each project's daily burst cube carries 400 extra distinct keys per type: above the cap alone.
const BURST = 400;
const NOW = Date.UTC(2026, 0, 10, 0, 0);
const FROM = Date.UTC(2026, 0, 6);
const TO = FROM + 3 * DAY;
const COUNTED = COUNTED_STREAMS;
const HEAP = ["range.heap_use.avg", "range.heap_use.max"];

let h: EngineHarness;
let result: JobResult;
let ledger: LedgerRow[];
let runMs = 0;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, maxRecords: CAP, burstKeys: BURST, projects: 2 });
  const t0 = performance.now();
  result = await h.run({
    command: "backfill",
    mode: { kind: "backfill", from: FROM, to: TO },
    streams: ["stat.*", ...COUNTED.slice(5), ...HEAP],
  });
  runMs = performance.now() - t0;
  ledger = await ledgerRows(h.sql);
}, 300_000);

afterAll(async () => {
  await h?.close();
});

describe("backfill of 3 days x 2 projects, cap 300", () => {
  it("completes, splits, and reports what the ledger holds", () => {
    const truncatedCount = ledger.filter((l) => l.status === "truncated").length;
    const splitCount = ledger.reduce((s, l) => s + l.splits, 0);
    process.stderr.write(
      `engine-completeness: backfill took ${Math.round(runMs)} ms, ${h.sandbox.requestLog.length} requests, ${splitCount} splits, ${truncatedCount} truncated windows\n`,
    );
    expect(result.exitCode).toBe(0);
    expect([...result.streams.keys()].sort()).toEqual([...COUNTED, ...HEAP].sort());
    expect(ledger.filter((l) => l.status === "failed")).toEqual([]);
    expect(splitCount).toBeGreaterThan(0);
    for (const [stream, c] of result.streams) {
      const mine = ledger.filter((l) => l.stream === stream && l.runId === result.runId);
      expect({ stream, rows: c.rows, splits: c.splits, truncated: c.truncated, failed: c.failed }).toEqual({
        stream,
        rows: mine.reduce((s, l) => s + l.rowsWritten, 0),
        splits: mine.reduce((s, l) => s + l.splits, 0),
        truncated: mine.filter((l) => l.status === "truncated").length,
        failed: 0,
      });
      expect(c.windows).toBeGreaterThan(0);
    }
  });

  it("the ledger of every stream tiles the range exactly, without gaps or overlaps", () => {
    for (const stream of [...COUNTED, ...HEAP]) {
      for (const pcode of h.pcodes) {
        const mine = ledger.filter((l) => l.stream === stream && l.pcode === pcode);
        let at = FROM;
        for (const l of mine) {
          expect({ stream, pcode, start: l.start }).toEqual({ stream, pcode, start: at });
          at = l.end;
        }
        expect({ stream, pcode, end: at }).toEqual({ stream, pcode, end: TO });
      }
    }
  });

  it("per key, the count sums equal the ground truth; burst cubes are marked truncated with both counts", async () => {
    for (const pcode of h.pcodes) {
      const bursts = [0, 1, 2].map((d) => h.truth.burstCube(pcode, FROM + d * DAY)!);
      for (const opId of COUNTED) {
        const truncated = ledger.filter((l) => l.stream === opId && l.pcode === pcode && l.status === "truncated");
        // Only a 5-minute window can stay truncated, and the burst cube of each day must be one.
        for (const w of truncated) {
          expect({ opId, pcode, len: w.end - w.start, expected: w.expectedTotal, fetched: w.rowsFetched, written: w.rowsWritten }).toEqual({
            opId,
            pcode,
            len: CUBE,
            expected: h.truth.total(pcode, opId, w.start, w.end),
            fetched: CAP,
            written: CAP,
          });
          expect(w.expectedTotal!).toBeGreaterThan(CAP);
        }
        expect(truncated.map((w) => w.start)).toEqual(expect.arrayContaining(bursts));
        const db = await dbCountsByKey(h.sql, opId, pcode, FROM, TO, truncated);
        const truth = truthCountsByKey(
          h.truth,
          pcode,
          opId,
          FROM,
          TO,
          truncated.map((w) => w.start),
        );
        expect(truth.size).toBeGreaterThan(0);
        expect({ opId, pcode, keys: db.size, diff: mapDiff(db, truth) }).toEqual({ opId, pcode, keys: truth.size, diff: [] });
        // The stored part of a truncated cube is the top of the answer, no more than the cap.
        const [stored] = await h.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM ${h.sql(tableOf(opId))}
          WHERE pcode = ${pcode} AND window_end - window_start = interval '5 minutes'
            AND (extract(epoch from window_start) * 1000)::float8 = ANY(${truncated.map((w) => w.start)}::float8[])`;
        expect(stored!.n).toBe(truncated.length * CAP);
      }
    }
  });

  it("heap use (no cap): every window holds the sandbox's records, value for value", async () => {
    for (const pcode of h.pcodes) {
      for (const opId of HEAP) {
        const merge = opId.endsWith("max") ? "max" : "avg";
        const windows = ledger.filter((l) => l.stream === opId && l.pcode === pcode);
        expect(windows.length).toBe((TO - FROM) / HOUR);
        const rows = await h.sql<{ s: number; oid: string; v: number; t: string }[]>`
          SELECT (extract(epoch from window_start) * 1000)::float8 AS s, oid::text, heap_use AS v, pg_typeof(heap_use)::text AS t
          FROM heap_use WHERE pcode = ${pcode} AND time_merge = ${merge}`;
        const got = new Map(rows.map((r) => [`${r.s}|${r.oid}`, r.v]));
        const want = new Map<string, number>();
        for (const w of windows)
          for (const r of h.truth.records(pcode, opId, w.start, w.end)) want.set(`${w.start}|${String(r.oid)}`, Number(r.heap_use));
        expect(want.size).toBeGreaterThan(0);
        expect(rows.every((r) => r.t === "double precision")).toBe(true);
        expect({ opId, pcode, diff: mapDiff(got, want) }).toEqual({ opId, pcode, diff: [] });
        expect(got.size).toBe(want.size);
      }
    }
  });

  it("no request exceeded its operation's limit, every window is on the 5-minute grid", () => {
    const windowed = h.sandbox.requestLog.filter((e) => e.stime !== null);
    expect(windowed.length).toBeGreaterThan(0);
    expect(windowViolations(h.sandbox.requestLog)).toEqual([]);
    expect(h.sandbox.requestLog.filter((e) => e.status === 400)).toEqual([]);
  });

  it("the comparison catches one lost row or one stale sub-window copy (runs last: it edits the data)", async () => {
    const pcode = h.pcodes[0]!;
    expect((await compareWithTruth(h, "stat.sql", pcode, FROM, TO)).diff).toEqual([]);
    await h.sql`DELETE FROM stat_sql WHERE ctid = (SELECT ctid FROM stat_sql WHERE pcode = ${pcode} AND window_end - window_start = interval '1 hour' LIMIT 1)`;
    expect((await compareWithTruth(h, "stat.sql", pcode, FROM, TO)).diff).not.toEqual([]);
    // A stale sub-window left beside its grain window (what a missed replace would leave).
    await h.sql`
      INSERT INTO range_remote
      SELECT (jsonb_populate_record(null::range_remote, to_jsonb(r) || jsonb_build_object('window_end', r.window_start + interval '5 minutes'))).*
      FROM range_remote r WHERE pcode = ${pcode} AND window_end - window_start = interval '1 hour' LIMIT 1`;
    expect((await compareWithTruth(h, "range.remote", pcode, FROM, TO)).diff).not.toEqual([]);
  });
});
