// `apm-sync transfer --to URL`: the embedded warehouse copied into an empty Postgres warehouse.
// Every table of the drizzle schema (db/tables.ts: data, rollups, ledger, watermarks, quarantine),
// whatever it holds, in ONE transaction of the target: a copy that fails halfway leaves nothing,
// and the row counts are compared before it commits. Partitions the rows need are made first
// (ensurePartitions, the write path's own helper: it cannot run inside a transaction); an
// empty partition left by a failed copy holds no data and does not stop the next try.
import type postgres from "postgres";
import type { Database } from "../db/driver/connect.ts";
import { ensurePartitions } from "../db/partitions/ensurePartitions.ts";
import { quoteIdent } from "../db/sqlText.ts";
import { partitionedTables, tableInfo, tableNames } from "../db/tables.ts";
import { UsageError } from "../usage-error.ts";
import { migrateDatabase } from "./migrate.ts";
import { copyTable } from "./transfer-copy.ts";

/** Rows of one table in the source, and in the target after the copy. */
export interface TableCount {
  readonly table: string;
  readonly source: number;
  readonly target: number;
}

export interface TransferOptions {
  /** How the target is named in messages (its URL with the password masked). */
  readonly target: string;
  /** Told as each table is copied. */
  readonly log?: (message: string) => void;
}

type Sql = postgres.Sql | postgres.TransactionSql;

/** Rows of each of `tables`, by name: one statement, whatever the number of tables. */
async function countRows(sql: Sql, tables: readonly string[]): Promise<Map<string, number>> {
  const each = tables.map((t, i) => `SELECT ${i} AS i, count(*)::text AS n FROM ${quoteIdent(t)}`);
  const rows = await sql.unsafe<{ i: number; n: string }[]>(each.join(" UNION ALL "));
  return new Map(rows.map((r) => [tables[r.i]!, Number(r.n)]));
}

/** The warehouse tables of `schema` that exist and hold a row (before migrating: some may not exist yet). */
async function tablesWithRows(sql: postgres.Sql, schema: string, tables: readonly string[]): Promise<string[]> {
  const present = await sql<{ t: string }[]>`
    SELECT t FROM unnest(${tables as string[]}::text[]) AS t WHERE to_regclass(${quoteIdent(schema)} || '.' || quote_ident(t)) IS NOT NULL`;
  if (present.length === 0) return [];
  const names = present.map((p) => p.t);
  const each = names.map((t, i) => `SELECT ${i} AS i WHERE EXISTS (SELECT 1 FROM ${quoteIdent(schema)}.${quoteIdent(t)})`);
  const held = await sql.unsafe<{ i: number }[]>(`${each.join(" UNION ALL ")} ORDER BY i`);
  return held.map((h) => names[h.i]!);
}

/** First instants of the months (UTC) the rows of a partitioned table fall in. */
async function monthsOf(sql: Sql, table: string, column: string): Promise<number[]> {
  const rows = await sql.unsafe<{ m: number }[]>(
    `SELECT DISTINCT (extract(epoch FROM date_trunc('month', ${quoteIdent(column)} AT TIME ZONE 'UTC')) * 1000)::float8 AS m
       FROM ${quoteIdent(table)} WHERE ${quoteIdent(column)} IS NOT NULL`,
  );
  return rows.map((r) => r.m);
}

/**
 * Every sequence a column of `tables` draws from (sync_runs.id, sync_windows.id, quarantine.id, and
 * whatever a migration adds) set so that its next value is past the column's largest: rows copied
 * with their ids must not meet a new row's id.
 */
async function advanceSequences(sql: postgres.TransactionSql, schema: string, tables: readonly string[]): Promise<void> {
  const serial = await sql<{ table: string; column: string; seq: string }[]>`
    SELECT c.relname AS table, a.attname AS column, pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) AS seq
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ${schema} AND c.relname = ANY(${tables as string[]}::text[]) AND a.attnum > 0 AND NOT a.attisdropped
       AND pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) IS NOT NULL`;
  for (const s of serial) {
    await sql.unsafe(`SELECT setval($1, coalesce(max(${quoteIdent(s.column)}), 0) + 1, false) FROM ${quoteIdent(s.table)}`, [s.seq]);
  }
}

/** Copies the rows; the counts are compared, and the sequences set, inside the target's transaction. */
async function copyAll(source: Database, target: Database, tables: readonly string[], log: (m: string) => void): Promise<TableCount[]> {
  return source.sql.begin("isolation level repeatable read read only", async (src) => {
    // Doubles leave as their shortest exact text (Postgres 12 and later for any value above 0).
    await src.unsafe("SET LOCAL extra_float_digits = 3");
    // Times leave in ISO form, which any DateStyle of the target reads the same.
    await src.unsafe("SET LOCAL datestyle = 'ISO, YMD'");
    for (const t of partitionedTables()) await ensurePartitions(target.sql, t.name, await monthsOf(src, t.name, t.partitionColumn));
    return target.sql.begin(async (dst) => {
      for (const table of tables) {
        const copied = await copyTable(src, dst, table, [...tableInfo(table).types.keys()]);
        log(`transfer: ${table}: ${copied} row(s) copied`);
      }
      const [from, to] = [await countRows(src, tables), await countRows(dst, tables)];
      const counts: TableCount[] = tables.map((table) => ({ table, source: from.get(table)!, target: to.get(table)! }));
      const differ = counts.filter((c) => c.source !== c.target);
      if (differ.length > 0)
        throw new Error(
          `row counts differ after the copy (${differ.map((c) => `${c.table}: ${c.source} vs ${c.target}`).join(", ")}); ` +
            "nothing was committed: run transfer again",
        );
      await advanceSequences(dst, target.schema, tables);
      return counts;
    });
  });
}

/**
 * Copies the warehouse of `source` into `target`: refuses (UsageError, nothing written) when a
 * table of the target holds a row, migrates the target, copies every table, and returns the
 * row counts of both sides, table by table.
 */
export async function transferWarehouse(source: Database, target: Database, opts: TransferOptions): Promise<TableCount[]> {
  const tables = tableNames();
  const held = await tablesWithRows(target.sql, target.schema, tables);
  if (held.length > 0)
    throw new UsageError(
      `--to: the warehouse at ${opts.target} (schema ${target.schema}) already holds data (${held.join(", ")}); ` +
        "transfer copies into an empty warehouse only and wrote nothing: point --to at a new database",
    );
  await migrateDatabase(target);
  return copyAll(source, target, tables, opts.log ?? (() => {}));
}
