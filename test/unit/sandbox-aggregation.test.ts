// Aggregation semantics: windowing independence against the ground truth, the record cap, the
// burst cube, window limits, the clock clamp and determinism.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STAT_DEFAULT_ORDER, STAT_TYPES } from "../../src/catalogue/stats.ts";
import { callSandbox, naturalKey, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";

const MIN5 = 300_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2025, 0, 15, 12, 0);
const DAY0 = Date.UTC(2025, 0, 14);

type Stat = { stime: number; etime: number; timestamp: number; data: Record<string, unknown>[]; total: number; retrievedTotal: number };

async function stat(sb: Sandbox, type: string, pcode: number, stime: number, etime: number, extra: Record<string, unknown> = {}) {
  const res = await callSandbox(sb, `stat.${type}`, { pcode, body: { stime, etime, ...extra } });
  expect(res.status, res.text).toBe(200);
  return res.json as Stat;
}

/** Window boundaries of a split of [from, from + 3 h), as offsets in 5-minute steps. */
const SPLITS: Record<string, number[]> = {
  "3 x 1 h": [0, 12, 24, 36],
  "36 x 5 min": Array.from({ length: 37 }, (_, i) => i),
  uneven: [0, 1, 13, 14, 30, 36],
};

describe("windowing: sums over any cube-aligned split equal the ground truth", () => {
  let sb: Sandbox;
  let pcode = 0;
  let from = 0;

  beforeAll(async () => {
    sb = await startSandbox({ seed: 11, projects: 2, now: () => NOW, maxRecords: 1_000_000, burstKeys: 300 });
    pcode = sb.projects[1]!.pcode; // the one beyond 2^31
    // A range that holds the day's burst cube, so the split also cuts through it.
    from = Math.floor(sb.truth.burstCube(pcode, DAY0)! / HOUR) * HOUR - HOUR;
    if (from < DAY0) from += HOUR;
  });
  afterAll(() => sb.stop());

  for (const type of STAT_TYPES) {
    it(`stat.${type}: count per key, per split`, async () => {
      const opId = `stat.${type}`;
      const truth = sb.truth.countsByKey(pcode, opId, from, from + 3 * HOUR);
      expect(truth.size).toBeGreaterThan(300); // includes the 300 burst keys
      const distinct: number[] = [];
      for (const [name, cuts] of Object.entries(SPLITS)) {
        const sums = new Map<string, number>();
        for (let i = 0; i + 1 < cuts.length; i++) {
          const body = await stat(sb, type, pcode, from + cuts[i]! * MIN5, from + cuts[i + 1]! * MIN5);
          expect(body.total).toBe(body.retrievedTotal);
          const keys = new Set(body.data.map((r) => naturalKey(opId, r)));
          expect(keys.size, "records unique by natural key").toBe(body.data.length);
          distinct.push(keys.size);
          for (const r of body.data) sums.set(naturalKey(opId, r), (sums.get(naturalKey(opId, r)) ?? 0) + Number(r.count));
        }
        expect({ name, keys: sums.size, equal: [...truth].every(([k, n]) => sums.get(k) === n) }).toEqual({
          name,
          keys: truth.size,
          equal: true,
        });
      }
      // Windows of different length hold different numbers of distinct keys.
      expect(new Set(distinct).size).toBeGreaterThan(5);
    });
  }

  it("min of mins and max of maxes over hours equal the 3-hour record", async () => {
    const whole = new Map(sb.truth.records(pcode, "stat.transaction", from, from + 3 * HOUR).map((r) => [r.serviceHash, r]));
    const min = new Map<unknown, number>();
    const max = new Map<unknown, number>();
    for (let h = 0; h < 3; h++) {
      for (const r of (await stat(sb, "transaction", pcode, from + h * HOUR, from + (h + 1) * HOUR)).data) {
        min.set(r.serviceHash, Math.min(min.get(r.serviceHash) ?? Infinity, r.timeMin as number));
        max.set(r.serviceHash, Math.max(max.get(r.serviceHash) ?? -Infinity, r.timeMax as number));
      }
    }
    for (const [k, r] of whole) {
      expect(min.get(k)).toBe(r.timeMin);
      expect(max.get(k)).toBe(r.timeMax);
      expect(r.timeAvg).toBeCloseTo((r.timeSum as number) / (r.count as number), 1);
    }
  });

  it("v1 range records: Total / count_total / count per key over 3 x 1 h equal the truth", async () => {
    for (const opId of ["range.httpc", "range.sql", "range.transaction", "range.remote", "range.exception"]) {
      const truth = sb.truth.countsByKey(pcode, opId, from, from + 3 * HOUR);
      const sums = new Map<string, number>();
      for (let h = 0; h < 3; h++) {
        const res = await callSandbox(sb, opId, { pcode, params: { stime: from + h * HOUR, etime: from + (h + 1) * HOUR } });
        const body = res.json as { records: Record<string, unknown>[]; total: number };
        expect(body.total).toBe(body.records.length);
        const field = opId === "range.httpc" ? "Total" : opId === "range.sql" ? "count_total" : "count";
        for (const r of body.records) sums.set(naturalKey(opId, r), (sums.get(naturalKey(opId, r)) ?? 0) + Number(r[field]));
      }
      expect({ opId, keys: sums.size, equal: [...truth].every(([k, n]) => sums.get(k) === n) }).toEqual({
        opId,
        keys: truth.size,
        equal: true,
      });
    }
  });
});

describe("record cap and the burst cube", () => {
  let sb: Sandbox;
  let pcode = 0;

  beforeAll(async () => {
    sb = await startSandbox({ seed: 5, projects: 1, now: () => NOW, maxRecords: 300, burstKeys: 1000 });
    pcode = sb.projects[0]!.pcode;
  });
  afterAll(() => sb.stop());

  it("some hour of the day is cut (exactly 300 records, total > retrievedTotal), some is not", async () => {
    const totals: number[] = [];
    for (let h = 0; h < 24; h++) {
      const stime = DAY0 + h * HOUR;
      const body = await stat(sb, "transaction", pcode, stime, stime + HOUR);
      const truth = sb.truth.records(pcode, "stat.transaction", stime, stime + HOUR);
      expect(body.total).toBe(truth.length);
      expect(body.retrievedTotal).toBe(Math.min(300, truth.length));
      expect(body.data.length).toBe(body.retrievedTotal);
      // The server keeps the top of the default order (timeSum, descending).
      expect(body.data).toEqual(truth.slice(0, 300));
      totals.push(body.total);
    }
    const busyNotBurst = totals.filter((t) => t > 300 && t < 1000);
    expect(busyNotBurst.length, `hourly totals ${totals}`).toBeGreaterThan(0);
    expect(totals.some((t) => t <= 300)).toBe(true);
  });

  it("the burst cube exceeds the cap alone, for every stat and range type", async () => {
    const cube = sb.truth.burstCube(pcode, DAY0)!;
    expect(cube % MIN5).toBe(0);
    expect(cube >= DAY0 && cube < DAY0 + DAY).toBe(true);
    for (const type of STAT_TYPES) {
      const body = await stat(sb, type, pcode, cube, cube + MIN5);
      expect(body.total).toBeGreaterThanOrEqual(1000);
      expect(body.total).toBe(sb.truth.total(pcode, `stat.${type}`, cube, cube + MIN5));
      expect(body.retrievedTotal).toBe(300);
      expect(body.data).toHaveLength(300);
    }
    for (const opId of ["range.exception", "range.httpc", "range.sql", "range.remote", "range.transaction"]) {
      const body = (await callSandbox(sb, opId, { pcode, params: { stime: cube, etime: cube + MIN5 } })).json as {
        records: unknown[];
        total: number;
      };
      expect(body.total).toBeGreaterThanOrEqual(1000);
      expect(body.records).toHaveLength(300);
    }
    // The next cube is an ordinary one.
    expect((await stat(sb, "transaction", pcode, cube + MIN5, cube + 2 * MIN5)).total).toBeLessThan(300);
  });

  it("sorts by the default column per type, or by `order`", async () => {
    for (const type of STAT_TYPES) {
      const col = STAT_DEFAULT_ORDER[type];
      const values = (await stat(sb, type, pcode, DAY0 + 3 * HOUR, DAY0 + 4 * HOUR)).data.map((r) => r[col] as number);
      expect(values.length).toBeGreaterThan(1);
      expect(values).toEqual([...values].sort((a, b) => b - a));
    }
    const byCount = (await stat(sb, "transaction", pcode, DAY0 + 3 * HOUR, DAY0 + 4 * HOUR, { order: "count" })).data.map(
      (r) => r.count as number,
    );
    expect(byCount).toEqual([...byCount].sort((a, b) => b - a));
    const bad = await callSandbox(sb, "stat.transaction", { pcode, body: { stime: DAY0, etime: DAY0 + HOUR, order: "nope" } });
    expect(bad.status).toBe(400);
  });

  it("stat.httpc filter: only the host and port, total counts the matches", async () => {
    const body = await stat(sb, "httpc", pcode, DAY0 + 14 * HOUR, DAY0 + 15 * HOUR, { filter: { host: "127.0.0.1", port: "10002" } });
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((r) => r.host === "127.0.0.1" && r.port === 10002)).toBe(true);
    expect(body.total).toBe(sb.truth.total(pcode, "stat.httpc", DAY0 + 14 * HOUR, DAY0 + 15 * HOUR, { host: "127.0.0.1", port: 10002 }));
  });
});

describe("window limits and the clock clamp", () => {
  let sb: Sandbox;
  let clock = NOW;
  let pcode = 0;

  beforeAll(async () => {
    sb = await startSandbox({ seed: 2, projects: 1, now: () => clock, burstKeys: 0 });
    pcode = sb.projects[0]!.pcode;
  });
  afterAll(() => sb.stop());

  it.each([
    ["stat.transaction", DAY],
    ["range.heap_use.avg", HOUR],
    ["range.exception", DAY],
    ["range.sql", DAY],
    ["visitors.m", 365 * DAY],
    ["visitors.d", 31 * DAY],
    ["project.agents_window", DAY],
  ])("%s: a window of the limit + 5 min gets 400, the limit itself 200", async (opId, limit) => {
    const stime = NOW - 400 * DAY;
    const call = (etime: number) =>
      opId.startsWith("stat.") || opId === "project.agents_window"
        ? callSandbox(sb, opId, { pcode, body: { stime, etime } })
        : callSandbox(sb, opId, { pcode, params: { stime, etime } });
    const over = await call(stime + limit + (opId === "visitors.m" ? DAY : MIN5));
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: 400 });
    expect((over.json as { msg: string }).msg).toMatch(/time range/);
    expect((await call(stime + limit)).status).toBe(200);
    expect(sb.requestLog.at(-2)).toMatchObject({ opId, status: 400, stime, pcode });
  });

  it("etime in the future is clamped to the clock; only complete cubes count", async () => {
    clock = Date.UTC(2025, 0, 15, 12, 2, 30);
    const stime = Date.UTC(2025, 0, 15, 11, 0);
    const body = await stat(sb, "transaction", pcode, stime, stime + 2 * HOUR);
    expect(body.stime).toBe(stime);
    expect(body.etime).toBe(clock);
    expect(body.timestamp).toBe(clock);
    // Cubes 11:00 .. 11:55 are complete; the 12:00 cube is still filling at 12:02:30.
    expect(body.data).toEqual(sb.truth.records(pcode, "stat.transaction", stime, Date.UTC(2025, 0, 15, 12, 0)));
    const heap = (await callSandbox(sb, "range.heap_use.max", { pcode, params: { stime: clock - 30 * 60_000, etime: clock + HOUR / 2 } }))
      .json;
    expect(heap).toMatchObject({ etime: clock });
    clock = NOW;
  });
});

describe("determinism", () => {
  const requests = [
    ["stat.transaction", { body: { stime: DAY0 + 10 * HOUR, etime: DAY0 + 11 * HOUR } }],
    ["stat.error", { body: { stime: DAY0 + 10 * HOUR, etime: DAY0 + 11 * HOUR } }],
    ["range.exception", { params: { stime: DAY0, etime: DAY0 + HOUR } }],
    ["range.heap_use.avg", { params: { stime: DAY0, etime: DAY0 + HOUR } }],
    ["project.event_history", { params: { stime: DAY0, etime: DAY0 + DAY } }],
    ["project.agents_window", { body: { stime: DAY0, etime: DAY0 + DAY } }],
    ["series.thread_count", { params: { stime: DAY0, etime: DAY0 + HOUR } }],
    ["visitors.5m", { params: { stime: DAY0, etime: DAY0 + HOUR } }],
    ["project.spot", {}],
    ["scalar.tps", {}],
  ] as const;

  async function bodies(seed: number): Promise<string[]> {
    const sb = await startSandbox({ seed, projects: 2, now: () => NOW, burstKeys: 100 });
    try {
      const out: string[] = [(await callSandbox(sb, "account.projects")).text];
      for (const [opId, o] of requests) out.push((await callSandbox(sb, opId, { pcode: sb.projects[1]!.pcode, ...o })).text);
      return out;
    } finally {
      await sb.stop();
    }
  }

  it("same seed: byte-identical responses; another seed: different ones", async () => {
    const [a, b, c] = [await bodies(9), await bodies(9), await bodies(10)];
    expect(a).toEqual(b);
    expect(a.every((t) => t.length > 2)).toBe(true);
    expect(a.filter((t, i) => t !== c[i]).length).toBe(a.length);
  });
});
