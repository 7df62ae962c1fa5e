// A window's rows encoded as its answers arrive (src/engine/encode-early.ts) are the rows the
// transaction's own path writes: the same rows, the same counts, and the same again, whole, when a transaction that wrote them is rolled back and written again (a retried
// write). A window whose write needs its transaction (a refused record) is left to it, its answer
// untouched.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnvelope } from "../../src/api/parse-response.ts";
import { MemoryBudget } from "../../src/api/spool.ts";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { ensureWritePartitions } from "../../src/db/partitions/ensureWritePartitions.ts";
import { encodeEarly } from "../../src/engine/encode-early.ts";
import { emptyWindowFetch, type WindowFetch } from "../../src/engine/fetch-window.ts";
import { projectTarget } from "../../src/engine/targets.ts";
import type { Target } from "../../src/engine/types.ts";
import type { EarlyRows } from "../../src/engine/window-rows.ts";
import { writeWindows } from "../../src/engine/write-window.ts";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { parseJson } from "../../src/schemas/json.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { pageOf } from "../support/pages.ts";
import { paramsFor, T } from "../support/sandbox-params.ts";

const H = 3_600_000;
const op = OPERATIONS.find((o) => o.id === "stat.transaction")!;
const WINDOW = { start: T, end: T + H };
const ROLLBACK = new Error("rolled back");

/**
 * A sandbox answer with a field the table has no column for (kept in extra) and, when `refuse`, a
 * record the schema refuses. (An answer with a value the database cannot hold escapes it, and an
 * escape sends the answer through the record splitter: never parsed whole, never encoded early.)
 */
async function answer(sb: Sandbox, refuse: boolean): Promise<string> {
  const res = await callSandbox(sb, op.id, paramsFor(op, sb, ""));
  const body = parseJson(res.text) as { data: Record<string, unknown>[] };
  body.data[0]!.surprise = "kept";
  if (refuse) body.data[1]!.count = "many";
  return JSON.stringify(body);
}

async function fetchedOf(body: string, budget?: MemoryBudget): Promise<WindowFetch> {
  const page = await pageOf(op, body, budget ? { budget } : {});
  const leaf = { ...WINDOW, truncated: false, expected: null, fetched: page.records.count, page, envelope: parseEnvelope(op, page) };
  return { ...emptyWindowFetch(), leaves: [leaf], requests: 1 };
}

describe.each(DATABASES)("a window's rows encoded as its answers arrive, on %s", (kind) => {
  let t: OpenedDatabase;
  let sb: Sandbox;
  beforeAll(async () => {
    [t, sb] = await Promise.all([openTestDatabase(kind), startSandbox({ seed: 5, now: () => T + 24 * H, burstKeys: 0 })]);
    await ensureWritePartitions(t.sql, projectTarget(op, sb.projects[0]!.pcode).stream.table, [T]);
  });
  afterAll(async () => {
    sb?.stop();
    await t?.drop();
  });

  const write = (target: Target, fetched: WindowFetch, early: EarlyRows | null) =>
    t.sql.begin((tx) => writeWindows(tx, target, [{ window: WINDOW, fetched, early }], 7, () => null));
  const rowsOf = (pcode: number) =>
    t.sql`select service_hash::text, service, count::text, time_sum::text, extra, window_start, window_end, run_id::text
      from stat_transaction where pcode = ${pcode} order by service_hash`;

  it("writes the rows the transaction's path writes, and all of them again after a rolled-back transaction", async () => {
    const body = await answer(sb, false);
    const [early, late] = [projectTarget(op, sb.projects[0]!.pcode), projectTarget(op, sb.projects[1]!.pcode)];
    const fetched = await fetchedOf(body);
    const rows = await encodeEarly(early, WINDOW, fetched, 7);
    expect(rows).not.toBeNull();
    // The parsed answer is let go of: read again, it throws (its rows are the encoded ones now).
    expect(() => [...fetched.leaves[0]!.page.records.batches(1 << 20)]).toThrow(/disposed/);
    // A transaction that wrote them and did not commit, as a write retried after a lost connection.
    await t.sql
      .begin(async (tx) => {
        await writeWindows(tx, early, [{ window: WINDOW, fetched, early: rows }], 7, () => null);
        throw ROLLBACK;
      })
      .catch((e) => expect(e).toBe(ROLLBACK));
    const [byEarly] = await write(early, fetched, rows);
    const [byTransaction] = await write(late, await fetchedOf(body), null);
    expect(byEarly).toEqual(byTransaction);
    expect(byEarly).toMatchObject({ quarantined: 0, truncated: 0 });
    expect(byEarly!.rows).toBeGreaterThan(10);
    expect(await rowsOf(early.pcode)).toEqual(await rowsOf(late.pcode));
    expect((await rowsOf(early.pcode)).length).toBe(byEarly!.rows);
  });

  it("charges the memory budget with what the encoded rows take, in place of the parsed answer, until disposed of", async () => {
    const budget = new MemoryBudget(64 * 2 ** 20);
    const fetched = await fetchedOf(await answer(sb, false), budget);
    const parsed = budget.used;
    expect(parsed).toBe(fetched.leaves[0]!.page.records.charged);
    const rows = (await encodeEarly(projectTarget(op, 424243), WINDOW, fetched, 7))!;
    // Every piece is a buffer of its own at its size: the charge is all the memory they keep.
    const kept = rows.rows.batches
      .flatMap((b) => b.data.chunks)
      .reduce((n, c) => n + (typeof c === "string" ? 2 * c.length : c.buffer.byteLength), 0);
    expect(kept).toBe(rows.rows.bytes);
    expect(budget.used).toBe(kept);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(parsed);
    fetched.leaves[0]!.page.dispose();
    expect(budget.used).toBe(0);
  });

  it("leaves a window with a refused record to its transaction, its answer untouched", async () => {
    const target = projectTarget(op, sb.projects[2]?.pcode ?? 424242);
    const fetched = await fetchedOf(await answer(sb, true));
    expect(await encodeEarly(target, WINDOW, fetched, 7)).toBeNull();
    const [written] = await write(target, fetched, null);
    expect(written).toMatchObject({ quarantined: 1 });
    expect(written!.rows).toBe(fetched.leaves[0]!.fetched - 1);
  });
});
