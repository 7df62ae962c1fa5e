// sync_runs tells the truth about runs that died: a `running` row whose process is gone (no
// session holds its lock) is marked interrupted by the next run; a live one is left alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../../src/db/ledger/startRun.ts";
import { formatStatus } from "../../src/report/format-status.ts";
import { readStatus } from "../../src/report/reads/readStatus.ts";
import { statusModel } from "../../src/report/status-model.ts";
import { adminSql } from "../support/db.ts";
import { type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 3, 2, 12, 0);

describe("sync_runs", () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, burstKeys: 0 });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it("marks a dead running row interrupted, keeps a live one running, and status says which", async () => {
    const dead = await startRun(h.sql, { command: "sync" });
    const live = await startRun(h.sql, { command: "backfill" });
    await h.sql`UPDATE sync_runs SET started_at = now() - interval '1 hour' WHERE id IN (${dead}, ${live})`;
    // Another process still working on `live`: it holds the run's lock on its own connection.
    const other = await h.sql.reserve();
    await other.unsafe("SELECT pg_advisory_lock(hashtext(current_schema() || '/sync_runs'), hashtext($1::text))", [String(live)]);
    // A run with the same id in ANOTHER database of the cluster (pg_locks lists them all) must not
    // keep this database's dead run alive.
    const elsewhere = adminSql();
    await elsewhere.unsafe("SELECT pg_advisory_lock(hashtext('apm/sync_runs'), hashtext($1::text))", [String(dead)]);
    try {
      const before = await readStatus(h.sql, NOW);
      expect(before.lastRun).toMatchObject({ id: live, status: "running", alive: true });
      await h.sql`DELETE FROM sync_runs WHERE id = ${live}`.then(
        () => undefined,
        () => undefined,
      );
      await h.sql`INSERT INTO sync_runs (id, command, status, started_at) VALUES (${live}, 'backfill', 'running', now() - interval '1 hour') ON CONFLICT DO NOTHING`;
      const result = await h.run({ command: "sync", mode: { kind: "sync" }, streams: ["stat.remote"] }, { APM_START: `${2 * HOUR}ms` });
      expect(result.exitCode).toBe(0);
      const rows = await h.sql<{ id: number; status: string }[]>`SELECT id::float8 AS id, status FROM sync_runs ORDER BY id`;
      expect(rows).toEqual([
        { id: dead, status: "interrupted" },
        { id: live, status: "running" },
        { id: result.runId, status: "ok" },
      ]);
    } finally {
      await other.unsafe("SELECT pg_advisory_unlock_all()");
      other.release();
      await elsewhere.end();
    }
    // A newest run whose process is gone: status says so without waiting for the next run.
    await startRun(h.sql, { command: "backfill" });
    const text = formatStatus(statusModel(await readStatus(h.sql, NOW), []));
    expect(text).toMatch(/last run: #\d+ backfill interrupted \(its process is gone/);
  }, 60_000);
});
