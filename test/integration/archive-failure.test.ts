// Prune with APM_ARCHIVE drops nothing whose file could not be written and checked (issue 41 item
// 1), on Postgres and on the embedded database: a directory that cannot be made, a file that does
// not read back the same (cut short, or another file), and a partition that gained a row after it
// was archived each leave the partition, its ledger windows and the archives table as they were,
// and no file behind. The same month then archives and drops when nothing is in the way.
import { copyFile, mkdtemp, readdir, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "../../src/db/partitions/ensurePartitions.ts";
import { partitionCache } from "../../src/db/partitions/partitionCache.ts";
import { partitionName } from "../../src/db/partitions/partitionName.ts";
import { archivePartition } from "../../src/warehouse/archive/write-archive.ts";
import { pruneWarehouse } from "../../src/warehouse/prune.ts";
import { addMonths, monthStart } from "../../src/windows/months.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { DAY } from "../support/engine-harness.ts";
import { HOUR } from "../support/time.ts";

const now = Date.now();
const month = addMonths(monthStart(now), -2);
const partition = partitionName("stat_transaction", month);

/** What must not change when nothing is dropped: the partition's rows, the ledger, the archives table. */
async function state(sql: postgres.Sql) {
  const [rows] = await sql.unsafe<{ n: number; sum: string }[]>(
    `SELECT count(*)::int AS n, md5(string_agg(t::text, ',' ORDER BY t::text)) AS sum FROM ${partition} t`,
  );
  const ledger = await sql`SELECT status, count(*)::int AS n FROM sync_windows GROUP BY 1 ORDER BY 1`;
  const archives = await sql`SELECT table_name, month FROM archives`;
  return { rows, ledger: [...ledger], archives: [...archives] };
}

/** Every file under `dir`, relative. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe.each(DATABASES)("archive failures drop nothing on %s", (kind) => {
  let db: OpenedDatabase;
  let dir: string;
  let before: Awaited<ReturnType<typeof state>>;
  const prune = (archive: Parameters<typeof pruneWarehouse>[2]["archive"]) =>
    pruneWarehouse(db.sql, { stat: DAY }, { now, dryRun: false, archive }).then((t) => t.find((x) => x.table === "stat_transaction")!);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "apm-archive-fail-"));
    db = await openTestDatabase(kind);
    await ensurePartitions(db.sql, "stat_transaction", [month]);
    for (let h = 0; h < 3; h++) {
      const [start, end] = [new Date(month + h * HOUR), new Date(month + (h + 1) * HOUR)];
      await db.sql`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash, service, count, time_sum)
        VALUES (7, ${start}, ${end}, ${h}, ${`/svc/${h}`}, ${10 + h}, ${1.5 * h})`;
      await db.sql`INSERT INTO sync_windows (stream, pcode, partition, window_start, window_end, status)
        VALUES ('stat.transaction', 7, '', ${start}, ${end}, 'done')`;
    }
    before = await state(db.sql);
  }, 120_000);
  afterAll(async () => {
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a directory that cannot be made: nothing dropped", async () => {
    const blocked = join(dir, "blocked");
    await writeFile(blocked, "a file where the archive's table directory would go");
    const t = await prune({ dir: join(blocked, "archive") });
    expect(t.skipped).toMatch(/^archive failed, nothing of it dropped: .*ENOTDIR/);
    expect(t.partitions).toEqual([]);
    expect(await state(db.sql)).toEqual(before);
    await rm(blocked);
  });

  it("a file that does not read back the same (cut short, or a valid file of other rows): nothing dropped, no file left", async () => {
    const cut = await prune({ dir, afterWrite: (temp) => truncate(temp, 200) });
    expect(cut.skipped).toMatch(/^archive failed, nothing of it dropped: /);
    expect(await state(db.sql)).toEqual(before);
    expect(await files(dir)).toEqual([]);

    // A valid file of the table holding other rows (none: an empty month's) put in its place.
    const elsewhere = await mkdtemp(join(tmpdir(), "apm-archive-other-"));
    const empty = addMonths(month, -1);
    await ensurePartitions(db.sql, "stat_transaction", [empty]);
    const other = await archivePartition(db.sql, "stat_transaction", empty, { dir: elsewhere });
    await db.sql.unsafe(`DROP TABLE ${partitionName("stat_transaction", empty)}`);
    partitionCache(db.sql, "stat_transaction").forget();
    const swapped = await prune({ dir, afterWrite: (temp) => copyFile(join(elsewhere, other.path), temp) });
    expect(swapped.skipped).toMatch(/read back 0 row\(s\) .*, wrote 3/);
    expect(await state(db.sql)).toEqual(before);
    expect(await files(dir)).toEqual([]);
    await rm(elsewhere, { recursive: true, force: true });
  });

  it("a row written into the partition after its file was written: nothing dropped, no file left", async () => {
    const t = await prune({
      dir,
      afterWrite: async () => {
        await db.sql.unsafe(`INSERT INTO ${partition} (pcode, window_start, window_end, service_hash) VALUES (7, $1, $2, 99)`, [
          new Date(month).toISOString(),
          new Date(month + HOUR).toISOString(),
        ]);
      },
    });
    expect(t.skipped).toMatch(/holds 4 row\(s\) now, 3 were archived; nothing dropped/);
    expect(await files(dir)).toEqual([]);
    await db.sql.unsafe(`DELETE FROM ${partition} WHERE service_hash = 99`);
    expect(await state(db.sql)).toEqual(before);
  });

  it("with nothing in the way the same month is archived and dropped", async () => {
    const t = await prune({ dir });
    expect(t.skipped).toBeNull();
    expect(t.partitions.map((p) => p.name)).toEqual([partition]);
    expect(t.archived?.map((a) => a.rows)).toEqual([3]);
    expect(await files(dir)).toEqual([`stat_transaction/month=${new Date(month).toISOString().slice(0, 7)}/part-0.parquet`]);
    const ledger = await db.sql`SELECT status, count(*)::int AS n FROM sync_windows GROUP BY 1`;
    expect([...ledger]).toEqual([{ status: "archived", n: 3 }]);
  });

  it("a later month that fails leaves no file of the earlier months written in the same prune", async () => {
    const earlier = await files(dir);
    const months = [addMonths(month, -3), addMonths(month, -2)];
    await ensurePartitions(db.sql, "stat_transaction", months);
    for (const m of months)
      await db.sql`INSERT INTO stat_transaction (pcode, window_start, window_end, service_hash) VALUES (7, ${new Date(m)}, ${new Date(m + HOUR)}, 1)`;
    let written = 0;
    const t = await prune({ dir, afterWrite: async (temp) => (++written === 2 ? truncate(temp, 200) : undefined) });
    expect(written).toBe(2);
    expect(t.skipped).toMatch(/^archive failed, nothing of it dropped: /);
    expect(await files(dir)).toEqual(earlier);
  });
});
