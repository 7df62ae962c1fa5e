// A window that takes the rollups' turn (src/db/refreshRollups.ts) decides so only after its hours
// are written; it must not hold the watermark's row while it waits for the turn
// (src/engine/write-window.ts): the holder of the turn writes the watermark too, and the two would
// deadlock (Postgres aborts one with 40P01; the engine retries it, with a warning).
import { afterAll, beforeAll, expect, it } from "vitest";
import { LOCK_KEY_SQL } from "../../src/db/withAdvisoryLock.ts";
import { type EngineHarness, HOUR, MINUTE, startEngineHarness } from "../support/engine-harness.ts";

const DAY1 = Date.UTC(2026, 2, 10);
const sync = { command: "sync", mode: { kind: "sync" }, streams: ["stat.transaction"] } as const;

let h: EngineHarness;

beforeAll(async () => {
  // One window at a time, no lookback: the run's windows are new hours, in order.
  h = await startEngineHarness({
    now: DAY1 + 23 * HOUR + 10 * MINUTE,
    burstKeys: 0,
    projects: 1,
    env: { APM_START: "2h", APM_LOOKBACK: "0h", APM_WINDOW_CONCURRENCY: "1" },
  });
  expect((await h.run(sync)).exitCode).toBe(0);
}, 120_000);
afterAll(async () => h?.close());

/** Whether a backend of this database waits for a lock, polled until `run` ends (then false). */
async function waitsForLock(run: Promise<unknown>): Promise<boolean> {
  let ended = false;
  run.finally(() => {
    ended = true;
  });
  while (!ended) {
    const [w] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()`;
    if (w!.n > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

it("a window waiting for the rollups' turn (the first of a new day) holds no lock on the watermark's row", async () => {
  const pcode = h.pcodes[0]!;
  const before = await h.sql<{ ms: number }[]>`
    SELECT (extract(epoch FROM watermark) * 1000)::float8 AS ms FROM watermarks WHERE stream = 'stat.transaction' AND pcode = ${pcode}`;
  expect(before).toHaveLength(1);
  // Another writer holds the turn of stat_transaction's rollups for this project.
  const turn = await h.sql.reserve();
  await turn`BEGIN`;
  await turn.unsafe(`SELECT pg_advisory_xact_lock(${LOCK_KEY_SQL})`, ["rollup/stat_transaction", String(pcode)]);
  let refused = "";
  let waited = false;
  h.setNow(DAY1 + 25 * HOUR + 10 * MINUTE);
  const run = h.run(sync);
  try {
    waited = await waitsForLock(run);
    await h.sql
      .begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '2s'`;
        await tx`UPDATE watermarks SET updated_at = updated_at WHERE stream = 'stat.transaction' AND pcode = ${pcode}`;
      })
      .catch((e: Error) => {
        refused = e.message;
      });
  } finally {
    await turn`COMMIT`;
    turn.release();
  }
  expect(waited).toBe(true);
  expect(refused).toBe("");
  expect((await run).exitCode).toBe(0);
  expect(h.logs.join("\n")).not.toContain("40P01");
  const [after] = await h.sql<{ ms: number }[]>`
    SELECT (extract(epoch FROM watermark) * 1000)::float8 AS ms FROM watermarks WHERE stream = 'stat.transaction' AND pcode = ${pcode}`;
  expect(after!.ms).toBeGreaterThan(before[0]!.ms);
});
