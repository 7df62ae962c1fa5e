// Integrity of an embedded data directory: PGlite opened on it with the amcheck contrib extension,
// bt_index_check over every btree index of the database (system catalogs included; a partitioned
// table's index is checked in its partitions), heap included: every row has its index entry.
import { PGlite } from "@electric-sql/pglite";
import { amcheck } from "@electric-sql/pglite/contrib/amcheck";

/** Indexes bt_index_check reported as broken, with its message; [] when every btree index is sound. */
export async function brokenIndexes(pgdata: string): Promise<string[]> {
  const pg = await PGlite.create(pgdata, { extensions: { amcheck } });
  try {
    await pg.exec("CREATE EXTENSION IF NOT EXISTS amcheck");
    const { rows } = await pg.query<{ oid: number; name: string }>(
      `SELECT c.oid::int AS oid, c.oid::regclass::text AS name
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
        WHERE am.amname = 'btree' AND c.relkind = 'i' AND c.relpersistence <> 't' AND i.indisvalid AND i.indisready
        ORDER BY 1`,
    );
    const broken: string[] = [];
    for (const r of rows) {
      try {
        await pg.query("SELECT bt_index_check($1::regclass, true)", [r.oid]);
      } catch (e) {
        broken.push(`${r.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (rows.length === 0) broken.push("no btree index found");
    return broken;
  } finally {
    await pg.close();
  }
}
