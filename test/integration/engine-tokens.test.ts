// Which token a server takes on the range and series operations is an open point of the spec.
// With both tokens configured (the normal setup), a backfill of every default stream must land the
// ground truth whether the server takes only the project token or only the account token, with at
// most one refused request per operation and project; and a wrong project token stops only what
// needs it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import type { JobResult } from "../../src/engine/run.ts";
import type { RangeTokenProfile } from "../../src/sandbox/profile.ts";
import {
  COUNTED_STREAMS,
  checksums,
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  ledgerRows,
  startEngineHarness,
} from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 2, 3, 12);
const FROM = Date.UTC(2026, 2, 2);
const TO = FROM + DAY;
const WINDOWED_TABLES = [
  ...new Set(OPERATIONS.filter((op) => op.stream?.enabledByDefault && op.windowLimitMs !== null).map((op) => op.stream!.table)),
];

const runs = new Map<RangeTokenProfile, { h: EngineHarness; result: JobResult; sums: Record<string, string> }>();

beforeAll(async () => {
  for (const rangeToken of ["project", "account"] as const) {
    const h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 2, profile: { rangeToken } });
    const result = await h.run({ command: "backfill", mode: { kind: "backfill", from: FROM, to: TO } });
    const sums = await checksums(h.sql, WINDOWED_TABLES);
    runs.set(rangeToken, { h, result, sums });
  }
}, 300_000);

afterAll(async () => {
  for (const { h } of runs.values()) await h.close();
});

describe.each(["project", "account"] as const)("a server whose range and series operations take only the %s token", (profile) => {
  it("backfills every default stream with exit 0 and the ground truth", async () => {
    const { h, result } = runs.get(profile)!;
    expect(result.exitCode, h.logs.join("\n")).toBe(0);
    expect([...result.streams.values()].reduce((n, c) => n + c.failed, 0)).toBe(0);
    for (const pcode of h.pcodes)
      for (const op of COUNTED_STREAMS) {
        const { diff, truthKeys } = await compareWithTruth(h, op, pcode, FROM, TO);
        expect(diff, `${op} ${pcode}`).toEqual([]);
        expect(truthKeys).toBeGreaterThan(0);
      }
    const failed = await ledgerRows(h.sql, { status: "failed" });
    expect(failed).toEqual([]);
  });

  it("sends at most one refused request per operation and project", () => {
    const { h } = runs.get(profile)!;
    const refused = h.sandbox.requestLog.filter((e) => e.status === 401);
    const perKey = new Map<string, number>();
    for (const e of refused) perKey.set(`${e.opId} ${e.pcode}`, (perKey.get(`${e.opId} ${e.pcode}`) ?? 0) + 1);
    expect([...perKey.values()].every((n) => n === 1)).toBe(true);
    const negotiated = new Set(
      h.sandbox.requestLog.filter((e) => e.opId && OPERATIONS.find((o) => o.id === e.opId)?.altToken).map((e) => `${e.opId} ${e.pcode}`),
    );
    // The project token goes first: refused only where the server wants the account token.
    expect(perKey.size).toBe(profile === "project" ? 0 : negotiated.size);
    expect(negotiated.size).toBeGreaterThan(10);
  });
});

it("lands the same rows in every windowed table whichever token the server takes", () => {
  expect(runs.get("account")!.sums).toEqual(runs.get("project")!.sums);
  const filled = Object.values(runs.get("project")!.sums).filter((sum) => !sum.startsWith("0:"));
  expect(filled.length).toBeGreaterThan(10);
});

describe("a wrong project token for one of two projects", () => {
  it("stops that project's project-token streams with one clear error; its range streams and the other project go on", async () => {
    const h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2, profile: { rangeToken: "account" } });
    try {
      const [bad, good] = h.sandbox.projects;
      const projects = `${bad!.pcode}:wrong-token-123,${good!.pcode}:${good!.token}`;
      const result = await h.run(
        {
          command: "backfill",
          mode: { kind: "backfill", from: FROM, to: FROM + 6 * HOUR },
          streams: ["stat.transaction", "stat.sql", "range.sql", "range.exception"],
        },
        { APM_PROJECTS: projects },
      );
      expect(result.exitCode).toBe(1);
      const failed = await ledgerRows(h.sql, { status: "failed" });
      expect(new Set(failed.map((l) => l.pcode))).toEqual(new Set([bad!.pcode]));
      expect(new Set(failed.map((l) => l.stream.split(".")[0]))).toEqual(new Set(["stat"]));
      // Each refused stream stops at its first refusal (plus the windows already in flight).
      expect(failed.length).toBeLessThanOrEqual(2 * 8);
      const done = await ledgerRows(h.sql, { status: "done" });
      const doneOf = (pcode: number, stream: string) => done.filter((l) => l.pcode === pcode && l.stream === stream).length;
      expect(doneOf(bad!.pcode, "range.sql")).toBe(6);
      expect(doneOf(bad!.pcode, "range.exception")).toBe(6);
      for (const s of ["stat.transaction", "stat.sql", "range.sql", "range.exception"]) expect(doneOf(good!.pcode, s)).toBe(6);
      const errors = h.logs.filter((l) => l.includes("refused the project token"));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(String(bad!.pcode));
      expect(h.logs.join("\n")).not.toContain("wrong-token-123");
    } finally {
      await h.close();
    }
  });
});
