// Time partitions (issue 18 item 1), on Postgres and on the embedded database: the declared tables
// are partitioned by month on their column with no default partition; ensurePartitions makes what a
// write needs, once, also when two do it at once, without waiting for the window transactions in
// flight; and a record the server dates far outside the window asked for is quarantined with its
// reason (server timestamps never decide which partitions exist), then stored when it is read again
// at its true time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { ensurePartitions } from "../../src/db/partitions/ensurePartitions.ts";
import { partitionCache } from "../../src/db/partitions/partitionCache.ts";
import { deleteWindow } from "../../src/db/sqlText.ts";
import { partitionedTables, tableInfo } from "../../src/db/tables.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import type { TestDatabase } from "../support/db.ts";
import { runEngine } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 4, 20, 12);
const DAY = 86_400_000;
const month = (y: number, m: number) => Date.UTC(y, m - 1, 1);

describe.each(DATABASES)("time partitions on %s", (kind) => {
  let t: OpenedDatabase;
  let sandbox: Sandbox;
  /** Every statement sent, and when (Date.now()). */
  const sent: { query: string; at: number }[] = [];
  beforeAll(async () => {
    [t, sandbox] = await Promise.all([
      openTestDatabase(kind, {
        debug: (_c, query) => void sent.push({ query, at: Date.now() }),
      }),
      startSandbox({ now: () => NOW, seed: 8, projects: 1, burstKeys: 0 }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await sandbox?.stop();
    await t?.drop();
  });

  const partitions = async (table: string) =>
    (
      await t.sql<{ name: string; bound: string }[]>`
        SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = ${table}::regclass AND c.relkind = 'r' ORDER BY 1`
    ).map((r) => `${r.name} ${r.bound}`);

  it("partitions every declared table by range on its column, with no default partition", async () => {
    const rows = await t.sql<{ name: string; col: string }[]>`
      SELECT c.relname AS name, a.attname::text AS col FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
      WHERE c.relnamespace = current_schema()::regnamespace AND p.partstrat = 'r' AND p.partdefid = 0 ORDER BY 1`;
    const declared = partitionedTables().map((p) => ({ name: p.name, col: p.partitionColumn }));
    expect(rows).toEqual(declared.sort((a, b) => a.name.localeCompare(b.name)));
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining(["stat_sql", "range_remote", "heap_use", "metric_points", "visitors", "events", "tx_calls"]),
    );
  });

  it("makes the months a write needs once, in UTC; asked again, it sends nothing", async () => {
    const made = await ensurePartitions(t.sql, "heap_use", [month(2025, 12) + 5 * DAY, month(2026, 2) - 1, month(2026, 2)]);
    expect(made).toEqual(["heap_use_p2025_12", "heap_use_p2026_01", "heap_use_p2026_02"]);
    expect(await partitions("heap_use")).toEqual([
      "heap_use_p2025_12 FOR VALUES FROM ('2025-12-01 00:00:00+00') TO ('2026-01-01 00:00:00+00')",
      "heap_use_p2026_01 FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2026-02-01 00:00:00+00')",
      "heap_use_p2026_02 FOR VALUES FROM ('2026-02-01 00:00:00+00') TO ('2026-03-01 00:00:00+00')",
    ]);
    const before = sent.length;
    expect(await ensurePartitions(t.sql, "heap_use", [month(2026, 1) + DAY])).toEqual([]);
    expect(sent.length).toBe(before);
    // A table that is not partitioned needs none.
    expect(await ensurePartitions(t.sql, "agent_inventory", [NOW])).toEqual([]);
  });

  it("sixteen at once in one process (a run's windows in flight) ask the database once", async () => {
    await ensurePartitions(t.sql, "stat_httpc", [month(2025, 6)]);
    // As at a run's start: the partition exists, this process remembers nothing of it yet.
    partitionCache(t.sql, "stat_httpc").forget();
    const before = sent.length;
    const made = await Promise.all(Array.from({ length: 16 }, () => ensurePartitions(t.sql, "stat_httpc", [month(2025, 6) + DAY])));
    expect(made.flat()).toEqual([]);
    const asked = sent.slice(before).filter((s) => s.query.includes("pg_inherits"));
    expect(asked).toHaveLength(1);
    // A month nobody made yet, asked for by many at once: made once, named once.
    const fresh = await Promise.all(Array.from({ length: 8 }, () => ensurePartitions(t.sql, "stat_httpc", [month(2025, 7)])));
    expect(fresh.flat()).toEqual(["stat_httpc_p2025_07"]);
    expect(await partitions("stat_httpc")).toContain(
      "stat_httpc_p2025_07 FOR VALUES FROM ('2025-07-01 00:00:00+00') TO ('2025-08-01 00:00:00+00')",
    );
  });

  it("two at once (two pools: two processes) make each partition once", async () => {
    const other =
      kind === "postgres"
        ? await openDatabase({ databaseUrl: (t as unknown as TestDatabase).url, dataDir: "", dbSchema: t.schema })
        : { sql: t.sql, close: async () => {} };
    try {
      const months = [month(2024, 1), month(2024, 2), month(2024, 3)];
      const [a, b] = await Promise.all([ensurePartitions(t.sql, "stat_sql", months), ensurePartitions(other.sql, "stat_sql", months)]);
      expect([...a, ...b].sort()).toEqual(["stat_sql_p2024_01", "stat_sql_p2024_02", "stat_sql_p2024_03"]);
      expect(await partitions("stat_sql")).toHaveLength(3);
    } finally {
      await other.close();
    }
  });

  it("a window's replace reads its own month's partition, not every later one", async () => {
    await ensurePartitions(t.sql, "stat_sql", [month(2024, 1), month(2024, 2), month(2024, 3)]);
    const start = new Date(month(2024, 1) + 4 * DAY);
    const s = deleteWindow(tableInfo("stat_sql"), 7, start, new Date(start.getTime() + 3_600_000));
    const plan = (await t.sql.unsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${s.text}`, s.params as never[])).map((r) => r["QUERY PLAN"]);
    const read = plan.join("\n").match(/stat_sql_p\d{4}_\d{2}/g) ?? [];
    // Bounded below only, the statement read the window's month and every month after it.
    expect([...new Set(read)]).toEqual(["stat_sql_p2024_01"]);
  });

  it("makes a window's partitions while the window is fetched, not after its answer", async () => {
    // Every answer comes a second after its request: the partitions of the window's month (its
    // table's and its rollups') are asked for when the request is sent.
    const slow = await startSandbox({ now: () => NOW, seed: 8, projects: 1, burstKeys: 0, latencyMs: [1000, 1000] });
    try {
      const from = month(2025, 3) + 9 * DAY;
      const before = sent.length;
      const result = await runEngine(
        { baseUrl: slow.url, projects: slow.projects, database: t, now: () => NOW },
        { command: "backfill", mode: { kind: "backfill", from, to: from + 3_600_000 }, streams: ["stat.error"] },
      );
      expect(result.exitCode).toBe(0);
      const asked = slow.requestLog.filter((e) => e.opId === "stat.error");
      expect(asked).toHaveLength(1);
      const made = ["stat_error_p2025_03", "rollup_stat_error_hourly_p2025_03", "rollup_stat_error_daily_p2025_03"];
      for (const name of made) {
        const create = sent.slice(before).find((s) => s.query.startsWith(`CREATE TABLE IF NOT EXISTS "${name}"`));
        expect(create, name).toBeDefined();
        expect(create!.at, name).toBeLessThan(asked[0]!.at + 1000);
      }
      expect(await partitions("stat_error")).toContain(
        "stat_error_p2025_03 FOR VALUES FROM ('2025-03-01 00:00:00+00') TO ('2025-04-01 00:00:00+00')",
      );
    } finally {
      await slow.stop();
    }
  }, 60_000);

  it.runIf(kind === "postgres")("does not wait for a window transaction in flight on the same table", async () => {
    await ensurePartitions(t.sql, "stat_remote", [month(2026, 1)]);
    const writer = await t.sql.reserve();
    try {
      await writer`BEGIN`;
      await writer`INSERT INTO stat_remote (pcode, window_start, window_end, ip, count) VALUES (1, '2026-01-05T10:00Z', '2026-01-05T11:00Z', '10.0.0.1', 1)`;
      // CREATE TABLE .. PARTITION OF would wait here for the writer's commit (ACCESS EXCLUSIVE).
      const made = await Promise.race([
        ensurePartitions(t.sql, "stat_remote", [month(2026, 2)]),
        new Promise((_, reject) => setTimeout(() => reject(new Error("ensurePartitions waited for the writer")), 5000)),
      ]);
      expect(made).toEqual(["stat_remote_p2026_02"]);
      await writer`COMMIT`;
    } finally {
      writer.release();
    }
  });

  it.each([
    ["stray-time", "before", "events_p2025_"],
    ["stray-time-later", "after", "events_p2027_"],
  ] as const)(
    "%s: quarantines an event dated 400 days %s its window (no partition for that month), and stores it when read at its true time",
    async (mode, _when, month) => {
      const pcode = sandbox.projects[0]!.pcode;
      const start = Date.UTC(2026, 4, 17);
      const engine = (mode: { kind: "sync" } | { kind: "backfill"; from: number; to: number }) =>
        runEngine(
          { baseUrl: sandbox.url, projects: sandbox.projects, database: t, now: () => NOW, env: { APM_START: "2d" } },
          { command: mode.kind, mode, streams: ["project.event_history"] },
        );
      sandbox.setHostile({ modes: [mode], ops: ["project.event_history"] });
      expect((await engine({ kind: "sync" })).exitCode).toBe(0);
      expect((await partitions("events")).filter((p) => p.startsWith(month))).toEqual([]);
      const held = await t.sql<{ reason: string }[]>`SELECT reason FROM quarantine WHERE stream = 'project.event_history'`;
      expect(held.length).toBeGreaterThan(0);
      for (const { reason } of held) expect(reason).toMatch(/outside|window|time/i);

      // Read again at their true times (a backfill of the range): one row per event, where it belongs.
      sandbox.setHostile(null);
      expect((await engine({ kind: "backfill", from: start, to: NOW })).exitCode).toBe(0);
      const stored = await t.sql<
        { key: string; time: Date }[]
      >`SELECT event_key AS key, event_time AS time FROM events WHERE pcode = ${pcode} ORDER BY 1`;
      const truth = sandbox.truth
        .events(pcode, start, NOW - 10 * 60_000, NOW)
        .map((e) => ({ key: String(e.uuid), time: new Date(e.eventTime as number) }))
        .sort((a, b) => a.key.localeCompare(b.key));
      expect(truth.length).toBeGreaterThan(10);
      expect(stored).toEqual(truth);
    },
    60_000,
  );
});
