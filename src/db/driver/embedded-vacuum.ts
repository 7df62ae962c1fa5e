// The embedded database's vacuum. On a Postgres server autovacuum makes the space of deleted and
// updated rows reusable. PGlite runs one backend alone (Postgres's single-user mode), where no
// autovacuum worker ever runs: the rows a window's replace deletes, the buckets a rollups' refresh
// rewrites, the ledger's and the marks' churn stayed dead for good, and every scheduled sync made the
// warehouse larger with no more rows in it (measured: `stat_sql` and its daily rollup grew by 520-640
// and 296-344 KiB a sync of 2 projects, without end; docs/benchmarks.md). So after a run the tables
// this process left dead rows in are vacuumed, as autovacuum would have: the space is reused by the
// next runs' rows. Postgres's VACUUM skips the pages its visibility map has all-visible and, with
// few dead rows, the indexes, so it should cost about what the run churned (inferred from how
// Postgres works, not measured apart: a first 2-day backfill's took under 0.05 s).
import type postgres from "postgres";
import { quoteIdent as q } from "../sqlText.ts";

/** Dead rows from which a table is vacuumed: autovacuum's base threshold (autovacuum_vacuum_threshold). */
export const DEAD_ROWS = 50;

export interface VacuumResult {
  /** The tables vacuumed, in the order they were. */
  readonly tables: readonly string[];
  /** Dead rows they held, as counted in this process. */
  readonly deadRows: number;
}

export interface VacuumOptions {
  /** Aborted at a signal: no table is started after it. */
  readonly stopping?: AbortSignal | undefined;
  /** Told the tables about to be vacuumed and the dead rows they hold, before the first. */
  readonly starting?: ((tables: number, deadRows: number) => void) | undefined;
}

/**
 * Vacuums the tables in which this process left more than DEAD_ROWS dead rows (the server's
 * statistics count them per process: PGlite keeps none across a restart), one at a time: those of
 * the current schema, and the system catalogs, which the temporary tables of upserts and
 * refreshes churn (each sync of 2 projects left about 2,500 dead rows in pg_attribute, 320 KiB).
 * A table of the schema is named as it is; a catalog with its schema (`pg_catalog.pg_attribute`).
 */
export async function vacuumChurned(sql: postgres.Sql, { stopping, starting }: VacuumOptions = {}): Promise<VacuumResult> {
  // The counters are flushed when the backend goes idle, at most once a second unless forced.
  await sql.unsafe("SELECT pg_stat_force_next_flush()");
  const churned = await sql.unsafe<{ schema: string; name: string; own: boolean; dead: number }[]>(
    `SELECT schemaname AS "schema", relname AS "name", schemaname = current_schema() AS "own", n_dead_tup::float8 AS "dead"
     FROM pg_stat_all_tables WHERE schemaname IN (current_schema(), 'pg_catalog') AND n_dead_tup > $1
     ORDER BY n_dead_tup DESC`,
    [DEAD_ROWS],
  );
  if (churned.length > 0)
    starting?.(
      churned.length,
      churned.reduce((n, t) => n + t.dead, 0),
    );
  const tables: string[] = [];
  let deadRows = 0;
  for (const { schema, name, own, dead } of churned) {
    if (stopping?.aborted) break;
    await sql.unsafe(`VACUUM ${own ? q(name) : `${q(schema)}.${q(name)}`}`);
    tables.push(own ? name : `${schema}.${name}`);
    deadRows += dead;
  }
  return { tables, deadRows };
}
