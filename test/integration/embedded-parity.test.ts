// The embedded database (PGlite over its socket) and a real Postgres go through the same code
// path: the same sync of the same sandbox data must leave identical tables in both.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/db/driver/connect.ts";
import { tableNames } from "../../src/db/tables.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { type EngineHarness, runEngine, startEngineHarness, tableChecksum } from "../support/engine-harness.ts";
import { coverageDiffs, rollupDiffs } from "../support/rollup-checks.ts";

const NOW = Date.UTC(2026, 9, 14, 12, 0, 0);
// Ids, clocks and run ids differ between two databases by nature; everything else must not.
const BOOKKEEPING = ["id", "started_at", "finished_at", "updated_at", "created_at", "run_id"];

async function checksumAll(sql: postgres.Sql): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await sql.begin(async (tx) => {
    // to_jsonb renders timestamptz in the session's time zone: make both sessions agree.
    await tx.unsafe("SET LOCAL TIME ZONE 'UTC'");
    // Rollups are checked against their raw rows below: a sum of doubles may differ in its last
    // bits with the order the rows were read in.
    for (const table of tableNames().filter((t) => t !== "sync_runs" && !t.startsWith("rollup_"))) {
      out[table] = await tableChecksum(tx as unknown as postgres.Sql, table, BOOKKEEPING);
    }
  });
  return out;
}

describe("embedded and real Postgres", () => {
  let h: EngineHarness;
  let dir: string;
  let embedded: Database;

  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 350 });
    dir = await mkdtemp(join(tmpdir(), "apm-parity-"));
    embedded = await openDatabase({ databaseUrl: null, dataDir: dir, dbSchema: "apm" });
    await migrateDatabase(embedded);
  }, 120_000);

  afterAll(async () => {
    await embedded?.close();
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the same sync (with splits) gives identical table checksums", async () => {
    const env = { APM_START: "6h" };
    const real = await h.run({ command: "sync", mode: { kind: "sync" } }, env);
    const emb = await runEngine(
      { baseUrl: h.sandbox.url, projects: h.sandbox.projects, accountToken: h.sandbox.accountToken, database: embedded, now: h.now, env },
      { command: "sync", mode: { kind: "sync" } },
    );
    expect(real.exitCode).toBe(0);
    expect(emb.exitCode).toBe(0);
    const splits = [...real.streams.values()].reduce((n, c) => n + c.splits, 0);
    expect(splits).toBeGreaterThan(0);
    const [a, b] = [await checksumAll(h.sql), await checksumAll(embedded.sql)];
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await rollupDiffs(embedded.sql)).toEqual([]);
    expect(await coverageDiffs(embedded.sql)).toEqual([]);
    expect(Object.keys(a).length).toBeGreaterThan(25);
    expect(Object.keys(a).some((t) => t.startsWith("rollup_"))).toBe(false);
    // Non-empty: a checksum of two empty tables would prove nothing.
    expect(Number(a.stat_transaction!.split(":")[0])).toBeGreaterThan(0);
    expect(Number(a.metric_points!.split(":")[0])).toBeGreaterThan(0);
    expect(b).toEqual(a);
  }, 240_000);
});
