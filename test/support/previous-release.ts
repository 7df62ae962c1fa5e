// A warehouse as an earlier release left it: the migrations up to one of them applied, and rows
// (made by a real sync into a current warehouse) copied in, table by table.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { quoteIdent } from "../../src/db/sqlText.ts";
import { tableInfo, tableNames } from "../../src/db/tables.ts";
import { migrationsFolder } from "../../src/warehouse/migrate.ts";

/** A copy of the migrations folder whose journal ends at `lastTag` (e.g. `0003_worker_heartbeats`); `remove()` deletes it. */
export function migrationsUpTo(lastTag: string): { folder: string; remove: () => void } {
  const folder = mkdtempSync(join(tmpdir(), "apm-migrations-"));
  cpSync(migrationsFolder(), folder, { recursive: true });
  const path = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(path, "utf8")) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === lastTag);
  if (last < 0) throw new Error(`no migration ${lastTag}`);
  writeFileSync(path, JSON.stringify({ ...journal, entries: journal.entries.slice(0, last + 1) }));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** The warehouse tables `sql`'s schema has (an earlier release has fewer). */
export async function existingTables(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<
    { t: string }[]
  >`SELECT relname AS t FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')`;
  const present = new Set(rows.map((r) => r.t));
  return tableNames().filter((t) => present.has(t));
}

/**
 * Copies every row of every warehouse table from `from` to `to` (same columns), through JSON:
 * exact for bigint, double precision (shortest round-trip text), timestamptz and jsonb. Serial
 * sequences are moved past the copied ids, so the next run's rows do not collide.
 */
export async function copyWarehouse(from: postgres.Sql, to: postgres.Sql): Promise<void> {
  for (const table of await existingTables(to)) {
    const t = quoteIdent(table);
    const [{ rows }] = (await from.unsafe(`SELECT coalesce(json_agg(x), '[]')::text AS rows FROM ${t} x`)) as unknown as [{ rows: string }];
    await to.unsafe(`INSERT INTO ${t} SELECT * FROM json_populate_recordset(NULL::${t}, $1::json)`, [rows]);
    if (!tableInfo(table).types.has("id")) continue;
    const [serial] = await to.unsafe<{ seq: string | null }[]>(`SELECT pg_get_serial_sequence($1, 'id') AS seq`, [table]);
    if (serial?.seq) await to.unsafe(`SELECT setval($1, coalesce((SELECT max(id) FROM ${t}), 0) + 1, false)`, [serial.seq]);
  }
}
