// The spec does not give the types of the v2 statistics' fields, and the docs' samples send numbers
// both bare and quoted ("600.0"). The sandbox answers either way (`numbers-as-text`: every number
// of every record as its decimal text), and a backfill lands the same warehouse both ways, equal
// to the sandbox's truth: the column declarations read each number in both forms.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareWithTruth, DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 2, 10, 0, 0);
const FROM = NOW - 4 * HOUR;
const TO = NOW - HOUR;
const STATS = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"];
const RANGES = ["range.exception", "range.httpc", "range.sql", "range.remote", "range.transaction"];
const STREAMS = [...STATS, ...RANGES, "range.heap_use.avg"];
const TABLES = [
  "stat_transaction",
  "stat_sql",
  "stat_httpc",
  "stat_error",
  "stat_remote",
  "range_exceptions",
  "range_httpc",
  "range_sql",
  "range_remote",
  "range_transactions",
  "heap_use",
];

let bare: EngineHarness;
let quoted: EngineHarness;

const start = () =>
  startEngineHarness({ now: NOW, burstKeys: 0, projects: 1, seed: 3, env: { APM_START: new Date(NOW - DAY).toISOString() } });
const backfill = (h: EngineHarness) => h.run({ command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: STREAMS });

/** Every row of `table` but the run's bookkeeping, as sorted JSON text. */
async function rowsOf(h: EngineHarness, table: string): Promise<string[]> {
  const rows = await h.sql.unsafe<{ r: string }[]>(
    `SELECT (to_jsonb(t) - 'run_id' - 'synced_at')::text AS r FROM "${table}" AS t ORDER BY 1`,
  );
  return rows.map((x) => x.r);
}

beforeAll(async () => {
  [bare, quoted] = await Promise.all([start(), start()]);
  quoted.sandbox.setHostile({ modes: ["numbers-as-text"], ops: ["stat.*", "range.*"] });
  const [a, b] = await Promise.all([backfill(bare), backfill(quoted)]);
  expect(a.exitCode, bare.logs.slice(-5).join("\n")).toBe(0);
  expect(b.exitCode, quoted.logs.slice(-5).join("\n")).toBe(0);
}, 120_000);

afterAll(async () => {
  await bare?.close();
  await quoted?.close();
});

describe("numbers sent bare or as text", () => {
  it("the sandbox quoted the numbers of every answer it was asked for", () => {
    const asked = quoted.sandbox.requestLog.filter((e) => e.opId !== null && STREAMS.includes(e.opId));
    expect(asked.length).toBeGreaterThan(STREAMS.length);
    expect(asked.filter((e) => !e.hostile?.includes("numbers-as-text"))).toEqual([]);
  });

  it("lands the same rows either way, none quarantined", async () => {
    for (const table of TABLES) {
      const rows = await rowsOf(bare, table);
      expect(rows.length, table).toBeGreaterThan(0);
      expect({ table, rows: await rowsOf(quoted, table) }).toEqual({ table, rows });
    }
    const [q] = await quoted.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quarantine`;
    expect(q!.n).toBe(0);
  });

  it("equals the sandbox's truth for every counted stream", async () => {
    const pcode = quoted.pcodes[0]!;
    for (const op of [...STATS, ...RANGES]) {
      const { diff, truthKeys } = await compareWithTruth(quoted, op, pcode, FROM, TO);
      expect({ op, diff }).toEqual({ op, diff: [] });
      expect(truthKeys, op).toBeGreaterThan(0);
    }
  });
});
