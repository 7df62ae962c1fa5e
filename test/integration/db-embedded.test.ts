import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { statTransaction } from "../../src/catalogue/stats.ts";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { startEmbedded } from "../../src/db/driver/embedded.ts";
import { checkpoint, walSinceCheckpoint } from "../../src/db/driver/embedded-wal.ts";
import { withAdvisoryLock } from "../../src/db/driver/withAdvisoryLock.ts";
import { advanceWatermark } from "../../src/db/ledger/advanceWatermark.ts";
import { readWatermark } from "../../src/db/ledger/readWatermark.ts";
import { replaceWindowRows, upsertRows } from "../../src/db/write/rowSink.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { serverKind } from "../support/databases.ts";
import { takeOnce } from "../support/lock.ts";
import { partitionsFor } from "../support/partitions.ts";

const dir = mkdtempSync(join(tmpdir(), "apm-sync-pglite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 0, 5, 10);
const H = 3_600_000;

describe("embedded database (PGlite through an in-process connection)", () => {
  it("migrates, writes through the same verbs, and keeps the data across a reopen", async () => {
    const logged: string[] = [];
    const config = { databaseUrl: null, dataDir: dir, dbSchema: "apm_emb" };
    const first = await openDatabase(config, { info: (m) => logged.push(m) });
    try {
      expect(await serverKind(first)).toBe("embedded");
      expect(logged.join("\n")).toContain(join(dir, "pgdata"));
      const m1 = await migrateDatabase(first);
      expect(m1.applied).toBe(m1.total);
      expect((await migrateDatabase(first)).applied).toBe(0);
      const rows = Array.from({ length: 6000 }, (_, i) => ({ service_hash: i - 3000, service: `/s${i}`, count: 2, time_sum: 3.5 }));
      await partitionsFor(first.sql, "stat_transaction", [], T0);
      const written = await first.sql.begin(async (tx) => {
        const r = await replaceWindowRows(
          tx,
          "stat_transaction",
          ["service_hash", "service", "count", "time_sum"],
          3_000_000_000,
          T0,
          T0 + H,
          rows,
        );
        await advanceWatermark(tx, "stat.transaction", 3_000_000_000, "", T0 + H);
        return r;
      });
      expect(written).toEqual({ deleted: 0, inserted: 6000, replaced: 0 });
      await first.sql.begin((tx) =>
        upsertRows(tx, "agents", ["pcode", "oname", "active"], ["pcode", "oname"], [{ pcode: 1, oname: "a", active: true }]),
      );
      // The single connection carries the lock; a second task of this process is refused.
      const lock = await withAdvisoryLock(first, "s", 1, () => withAdvisoryLock(first, "s", 1, async () => 1, takeOnce), takeOnce);
      expect(lock).toEqual({ acquired: true, value: { acquired: false } });
    } finally {
      await first.close();
    }
    const again = await openDatabase(config);
    try {
      const [agg] =
        await again.sql`select count(*)::int as n, sum(count)::int as c, sum(time_sum) as t from stat_transaction where pcode = 3000000000`;
      expect(agg).toEqual({ n: 6000, c: 12_000, t: 21_000 });
      expect(await readWatermark(again.sql, "stat.transaction", 3_000_000_000)).toBe(T0 + H);
      // drizzle reads through the same connection and schema.
      const viaDrizzle = await again.db.select().from(statTransaction).limit(1);
      expect(viaDrizzle[0]?.window_start).toEqual(new Date(T0));
      expect(viaDrizzle[0]?.pcode).toBe(3_000_000_000);
      const [{ s }] = (await again.sql`select current_schema() as s`) as unknown as [{ s: string }];
      expect(s).toBe("apm_emb");
    } finally {
      await again.close();
    }
  });

  it("its statement hook (openDatabase's debug) sees the caller's statements, not the WAL bound's, which run on their own clock", async () => {
    const seen: string[] = [];
    const database = await openDatabase({ databaseUrl: null, dataDir: join(dir, "hook"), dbSchema: "apm_hook" }, undefined, {
      debug: (_c, query) => seen.push(query),
    });
    try {
      // Connected (postgres.js reads the array types first).
      await database.sql`select 0`;
      seen.length = 0;
      // What the bound sends (db/driver/embedded-wal.ts), whenever its check comes.
      expect(await walSinceCheckpoint(database.sql)).toBeGreaterThanOrEqual(0);
      await checkpoint(database.sql);
      await database.sql`select 1 as one`;
      expect(seen.filter((q) => !/^select 1 as one$/.test(q.trim()))).toEqual([]);
      expect(seen).toHaveLength(1);
    } finally {
      await database.close();
    }
  });

  it("a connection that goes away inside a transaction rolls it back; the next one starts clean", async () => {
    const server = await startEmbedded(join(dir, "conn"), "apm_conn");
    const client = () => postgres({ ...({ socket: () => server.connect() } as Record<string, unknown>), max: 1, onnotice: () => {} });
    try {
      const a = client();
      await a`create table t (x int)`;
      await a`begin`;
      await a`insert into t values (1)`;
      // Gone without a commit (a killed process, a dropped connection).
      await a.end({ timeout: 0 });
      const b = client();
      expect(await b`select count(*)::int as n from t`).toEqual([{ n: 0 }]);
      await b.begin((tx) => tx`insert into t values (2)`);
      expect(await b`select x from t`).toEqual([{ x: 2 }]);
      await b.end();
    } finally {
      await server.stop();
    }
  });
});
