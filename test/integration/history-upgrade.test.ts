// A warehouse of the release before the history (migrations up to 0018) upgrades with history: each
// dimension row becomes its first version, valid from its first_seen_at, a deleted one closed at its
// deleted_at; the next sync, seeing the same lists, adds no version but for the row listed again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { historyTableName, VERSIONED_TABLES } from "../../src/db/history/versioned.ts";
import { naturalKey } from "../../src/db/write/naturalKey.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type EngineHarness, runEngine, startEngineHarness } from "../support/engine-harness.ts";
import { copyWarehouse, migrationsUpTo } from "../support/previous-release.ts";

const NOW = Date.UTC(2026, 3, 14, 9, 30);
const STREAMS = [
  "account.projects",
  "account.project_members",
  "account.groups",
  "project.detail",
  "project.agents",
  "project.event_settings",
];

describe("upgrading a warehouse without history", () => {
  let h: EngineHarness;
  let old: TestDatabase;
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, projects: 2, burstKeys: 0 });
    expect((await h.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS })).exitCode).toBe(0);
    old = await createTestDatabase({ migrated: false });
    const release = migrationsUpTo("0018_open_days_to_marks");
    try {
      await migrateDatabase(old, release.folder);
    } finally {
      release.remove();
    }
    await copyWarehouse(h.sql, old.sql);
    await old.sql`UPDATE agents SET deleted_at = first_seen_at + interval '1 hour' WHERE oname = (SELECT min(oname) FROM agents)`;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await old?.drop();
  });

  it("starts each history with the rows as first versions; the next sync adds only the version of the row that came back", async () => {
    expect((await migrateDatabase(old)).applied).toBeGreaterThan(0);
    for (const table of VERSIONED_TABLES) {
      const mismatched = await old.sql.unsafe(
        `SELECT t.* FROM "${table}" t FULL JOIN "${historyTableName(table)}" v USING (${keyOf(table)})
         WHERE v.valid_from IS DISTINCT FROM t.first_seen_at OR v.valid_to IS DISTINCT FROM t.deleted_at OR t.extra IS DISTINCT FROM v.extra`,
      );
      expect(mismatched, table).toEqual([]);
    }
    const [counts] = await old.sql<{ agents: number; closed: number; settings: number }[]>`
      SELECT (SELECT count(*)::int FROM agents_history) AS agents, (SELECT count(*)::int FROM agents_history WHERE valid_to IS NOT NULL) AS closed,
        (SELECT count(*)::int FROM event_settings_history) AS settings`;
    expect(counts!.agents).toBeGreaterThan(4);
    expect(counts!.closed).toBe(1);
    expect(counts!.settings).toBeGreaterThan(4);

    const before = await versionCount(old);
    const run = await runEngine(
      {
        baseUrl: h.sandbox.url,
        projects: h.sandbox.projects,
        accountToken: h.sandbox.accountToken,
        database: old,
        now: () => NOW + 60_000,
      },
      { command: "sync", mode: { kind: "sync" }, streams: STREAMS },
    );
    expect(run.exitCode).toBe(0);
    // The one agent marked deleted is listed again: its new version opens; nothing else changes.
    expect(await versionCount(old)).toEqual({ ...before, agents_history: before.agents_history! + 1 });
  });
});

const keyOf = (table: string) =>
  naturalKey(table)
    .map((c) => `"${c}"`)
    .join(", ");

async function versionCount(db: TestDatabase): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of VERSIONED_TABLES) {
    const [r] = await db.sql.unsafe(`SELECT count(*)::int AS n FROM "${historyTableName(t)}"`);
    out[historyTableName(t)] = r!.n as number;
  }
  return out;
}
