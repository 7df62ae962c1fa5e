// `prune` (issue 18 item 3): drops the monthly partitions the retention no longer keeps, table by
// table, and marks the ledger windows of the dropped time `pruned`; the rollups' coverage of the
// dropped buckets goes with them. Also run at the end of `sync`
// and of each scheduled tick when a retention is set.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type postgres from "postgres";
import { isRollupTable, type PrunableTable, prunableTables, rollupSource } from "../config/retention-keys.ts";
import { LIMIT_SQLSTATE } from "../db/driver/transient.ts";
import type { ArchiveRow } from "../db/ledger/archives.ts";
import { countPrunable } from "../db/ledger/countPrunable.ts";
import { ARCHIVE_STALE, dropPartitions } from "../db/partitions/dropPartitions.ts";
import { type PartitionInfo, readPartitions } from "../db/partitions/readPartitions.ts";
import { keepRollups, type RollupCut } from "../db/rollups/keep.ts";
import { pruneCoverage } from "../db/rollups/pruneCoverage.ts";
import { refreshRollups } from "../db/rollups/refresh.ts";
import { COVERAGE_TABLE } from "../db/rollups/spec.ts";
import { rollupWriter } from "../db/views.ts";
import { monthStart } from "../windows/months.ts";
import { type ArchiveOptions, archivePartition } from "./archive/write-archive.ts";
import { retentionStart, type TableRetention, tableRetention } from "./retention.ts";

export interface TablePrune {
  readonly table: string;
  readonly retention: TableRetention;
  /** The first month kept (epoch ms), null when the table keeps everything. */
  readonly keptFrom: number | null;
  /** Dropped (or, in a dry run, to be dropped), oldest first, with rows and bytes. */
  readonly partitions: readonly PartitionInfo[];
  /** Ledger windows marked pruned or archived (or to be marked). */
  readonly windows: number;
  /** The partitions written to Parquet before they were dropped (APM_ARCHIVE), each a file. */
  readonly archived?: readonly ArchiveRow[];
  /** A dry run with APM_ARCHIVE: the partitions that would be written to Parquet first (those holding rows). */
  readonly toArchive?: number;
  /** Why nothing was dropped though something was due (a query held the table). */
  readonly skipped: string | null;
  /** Rows deleted (or to be) from a table that is not partitioned: the rollups' coverage. */
  readonly deletedRows?: number;
}

export interface PruneOptions {
  readonly now: number;
  readonly dryRun: boolean;
  /** How long a DROP may wait for the queries and writes on its table (default 10 s). */
  readonly lockTimeoutMs?: number;
  /** Write each partition to Parquet under this directory before dropping it (APM_ARCHIVE). */
  readonly archive?: ArchiveOptions | null;
}

/**
 * Prunes every partitioned table under `retention` (key -> ms); tables that keep everything are
 * listed too. First the rollups' marked buckets are refreshed; last the buckets' coverage goes,
 * where the rollups' partitions all went as due.
 */
export async function pruneWarehouse(
  sql: postgres.Sql,
  retention: Readonly<Record<string, number>>,
  opts: PruneOptions,
): Promise<TablePrune[]> {
  const cut: RollupCut = {
    hourly: firstKeptMonth(rollupRetention(retention, "hourly"), opts.now),
    daily: firstKeptMonth(rollupRetention(retention, "daily"), opts.now),
  };
  // Every marked bucket is materialised first: the months dropped leave no mark behind.
  if (!opts.dryRun) await refreshRollups(sql, rollupWriter);
  const out: TablePrune[] = [];
  for (const t of prunableTables()) out.push(await pruneTable(sql, t, retention, cut, opts));
  const coverage = await pruneBucketCoverage(sql, opts, out);
  if (coverage) out.push(coverage);
  return out;
}

/** The first month kept at `now` under `kept`: only whole months go, the one holding the retention's start stays until it is wholly past. */
function firstKeptMonth(kept: TableRetention, now: number): number | null {
  return kept.ms === null ? null : monthStart(retentionStart(now, kept.ms));
}

/** What `rollup.hourly` or `rollup.daily` keeps. */
function rollupRetention(retention: Readonly<Record<string, number>>, grain: "hourly" | "daily"): TableRetention {
  return tableRetention(retention, { table: `rollup.${grain}`, sources: [rollupSource(`rollup.${grain}`)] });
}

async function pruneTable(
  sql: postgres.Sql,
  t: PrunableTable,
  retention: Readonly<Record<string, number>>,
  cut: RollupCut,
  opts: PruneOptions,
): Promise<TablePrune> {
  const kept = tableRetention(retention, t);
  const keptFrom = firstKeptMonth(kept, opts.now);
  if (keptFrom === null) return { table: t.table, retention: kept, keptFrom: null, partitions: [], windows: 0, skipped: null };
  const streams = t.writers;
  const due = await readPartitions(sql, t.table, { endingBy: keptFrom, countRows: true });
  const base = { table: t.table, retention: kept, keptFrom, partitions: due, skipped: null };
  // With APM_ARCHIVE, each partition due that holds rows is written to Parquet first.
  const toArchive = opts.archive ? due.filter((d) => (d.rows ?? 0) > 0) : [];
  if (opts.dryRun)
    return { ...base, windows: await countPrunable(sql, streams, keptFrom), ...(opts.archive ? { toArchive: toArchive.length } : {}) };
  const archived: ArchiveRow[] = [];
  try {
    // Each written and checked; the first that fails stops them all.
    if (opts.archive) for (const p of toArchive) archived.push(await archivePartition(sql, t.table, p.from, opts.archive));
  } catch (e) {
    await removeFiles(opts.archive, archived);
    return { ...base, partitions: [], windows: 0, skipped: `archive failed, nothing of it dropped: ${(e as Error).message}` };
  }
  try {
    const keep = await keepRollups(
      sql,
      t.table,
      due.map((p) => p.from),
      keptFrom,
      cut,
    );
    const done = await dropPartitions(
      sql,
      t.table,
      due.map((p) => p.name),
      streams,
      keptFrom,
      opts.lockTimeoutMs,
      keep,
      archived,
    );
    const partitions = due.filter((p) => done.dropped.includes(p.name));
    return { ...base, partitions, windows: done.windows, archived: archived.filter((a) => partitions.some((p) => p.from === a.month)) };
  } catch (e) {
    await removeFiles(opts.archive, archived);
    const code = (e as { code?: unknown }).code;
    if (code === ARCHIVE_STALE)
      return { ...base, partitions: [], windows: 0, skipped: `${(e as Error).message}; nothing dropped: prune again` };
    // A query kept the table longer than the lock timeout: nothing was dropped.
    if (code !== LIMIT_SQLSTATE.LOCK_NOT_AVAILABLE) throw e;
    return { ...base, partitions: [], windows: 0, skipped: "a query or write held the table past the lock timeout; prune again later" };
  }
}

/** Nothing was dropped: the files written stay out of the archive (it holds only dropped months). */
async function removeFiles(archive: ArchiveOptions | null | undefined, files: readonly ArchiveRow[]): Promise<void> {
  if (archive) for (const a of files) await rm(join(archive.dir, a.path), { force: true });
}

/**
 * The buckets' coverage rows before the first month every rollup table keeps (the longest of their
 * retentions), once every one was pruned (`done`: none skipped); null when one keeps everything.
 */
async function pruneBucketCoverage(sql: postgres.Sql, opts: PruneOptions, done: readonly TablePrune[]): Promise<TablePrune | null> {
  const rollups = done.filter((t) => isRollupTable(t.table));
  const longest = rollups
    .map((t) => t.retention)
    .reduce((a, b) => ((b.ms ?? Number.POSITIVE_INFINITY) > (a.ms ?? Number.POSITIVE_INFINITY) ? b : a));
  const kept = { ...longest, table: COVERAGE_TABLE };
  const keptFrom = firstKeptMonth(kept, opts.now);
  if (keptFrom === null) return null;
  const base = { table: COVERAGE_TABLE, retention: kept, keptFrom, partitions: [], windows: 0 };
  if (rollups.some((t) => t.skipped)) return { ...base, skipped: "a rollup was skipped; prune again later" };
  return { ...base, skipped: null, deletedRows: await pruneCoverage(sql, keptFrom, opts.dryRun) };
}
