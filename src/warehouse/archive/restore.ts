// `apm-sync restore --months YYYY-MM[,..] [--streams]`: loads archived months back from their
// Parquet files (src/warehouse/archive/write-archive.ts): the partitions are made again, each
// file's rows copied in (COPY, a row group at a time), its ledger windows given back the status
// they had when archived (db/ledger/archives.ts) and its archives row removed, in one transaction
// per file; once that is committed the file goes (the archive directory holds exactly the months
// the warehouse does not, so a query over both never counts a month twice); then the rollups'
// hours of those rows are refreshed. Refused, nothing written, when a month is not archived (for
// the tables of those streams), when its partition holds rows, or when a file is missing or not
// the one archived.
import { existsSync } from "node:fs";
import { rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import { prunableTables } from "../../config/retention-keys.ts";
import { type ArchiveRow, readArchives, unrecordArchive } from "../../db/ledger/archives.ts";
import { ensureWritePartitions } from "../../db/partitions/ensureWritePartitions.ts";
import { partitionName } from "../../db/partitions/partitionName.ts";
import { refreshRollups } from "../../db/rollups/refresh.ts";
import { MARKS_TABLE, rollupOf } from "../../db/rollups/spec.ts";
import { quoteIdent, quoteLiteral } from "../../db/sqlText.ts";
import { rollupWriter } from "../../db/views.ts";
import { copyEscape } from "../../db/write/copyText.ts";
import { monthName } from "../../windows/months.ts";
import { type ArchiveColumn, archiveColumns, type ParquetValue } from "./columns.ts";
import { archiveRowGroups, fileSha256 } from "./read-archive.ts";

export type RestorePlan = { readonly files: ArchiveRow[]; readonly problems: [] } | { readonly files: []; readonly problems: string[] };

/** The raw tables the streams write (all of them without `streams`), each with its writers. */
function restorable(streams: readonly string[] | null) {
  return prunableTables().filter((t) => t.writers.length > 0 && (streams === null || t.writers.some((w) => streams.includes(w))));
}

/** What a restore of `months` would load, or why it is refused. */
export async function planRestore(
  sql: postgres.Sql,
  dir: string,
  months: readonly number[],
  streams: readonly string[] | null,
): Promise<RestorePlan> {
  const tables = restorable(streams).map((t) => t.table);
  const files = (await readArchives(sql, tables)).filter((a) => months.includes(a.month));
  const problems: string[] = [];
  for (const m of months.filter((m) => !files.some((f) => f.month === m)))
    problems.push(`${monthName(m)} is not archived${streams ? ` for ${streams.join(", ")}` : ""} (the archives table has no file of it)`);
  for (const f of files) {
    const held = await heldRows(sql, partitionName(f.table, f.month));
    if (held > 0) problems.push(`${f.table} ${monthName(f.month)} holds ${held} row(s) already: restoring would double them`);
    const path = join(dir, f.path);
    if (!existsSync(path)) problems.push(`${f.table} ${monthName(f.month)}: ${path} is missing`);
    else if ((await fileSha256(path)) !== f.sha256)
      problems.push(`${f.table} ${monthName(f.month)}: ${path} is not the file archived (its SHA-256 differs)`);
  }
  return problems.length > 0 ? { files: [], problems } : { files, problems: [] };
}

/** Rows in a partition (0 when it does not exist). */
async function heldRows(sql: postgres.Sql, partition: string): Promise<number> {
  const [exists] = await sql<{ r: string | null }[]>`SELECT to_regclass(${quoteIdent(partition)})::text AS r`;
  if (!exists!.r) return 0;
  const [row] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::float8 AS n FROM ${quoteIdent(partition)}`);
  return row!.n;
}

/** Loads `files` (a plan without problems); returns rows and windows restored per file. */
export async function restoreFiles(
  sql: postgres.Sql,
  dir: string,
  files: readonly ArchiveRow[],
): Promise<{ file: ArchiveRow; rows: number; windows: number }[]> {
  const out: { file: ArchiveRow; rows: number; windows: number }[] = [];
  for (const file of files) {
    const writers = prunableTables().find((t) => t.table === file.table)?.writers ?? [];
    await ensureWritePartitions(sql, file.table, [file.month]);
    const done = await sql.begin(async (tx) => {
      const columns = archiveColumns(file.table);
      const partition = partitionName(file.table, file.month);
      const rows = await copyFile(tx, partition, columns, join(dir, file.path));
      if (rows !== file.rows) throw new Error(`${file.path}: ${rows} row(s) loaded, ${file.rows} archived`);
      await markRollupHours(tx, file.table, partition);
      return { file, rows, windows: await unrecordArchive(tx, file, writers) };
    });
    await rm(join(dir, file.path), { force: true });
    await rmdir(dirname(join(dir, file.path))).catch(() => {});
    out.push(done);
  }
  await refreshRollups(sql, rollupWriter);
  return out;
}

/** The file's rows into the partition with one COPY, a row group at a time; returns how many. */
async function copyFile(tx: postgres.TransactionSql, partition: string, columns: readonly ArchiveColumn[], path: string): Promise<number> {
  let rows = 0;
  async function* lines() {
    for await (const group of archiveRowGroups(path, columns)) {
      rows += group.length;
      yield group.map((row) => `${row.map((v, i) => copyValue(columns[i]!, v)).join("\t")}\n`).join("");
    }
  }
  const list = columns.map((c) => quoteIdent(c.name)).join(", ");
  const writable = await tx.unsafe(`COPY ${quoteIdent(partition)} (${list}) FROM STDIN`).writable();
  await pipeline(Readable.from(lines(), { highWaterMark: 1 }), writable);
  return rows;
}

function copyValue(c: ArchiveColumn, v: ParquetValue | undefined): string {
  const text = c.toCopy(v ?? null);
  return text === null ? "\\N" : copyEscape(text);
}

/** Marks the rollup hours of the partition's rows for the refresh (their rows came back). */
async function markRollupHours(tx: postgres.TransactionSql, table: string, partition: string): Promise<void> {
  const spec = rollupOf(table);
  if (!spec) return;
  await tx.unsafe(
    `INSERT INTO ${quoteIdent(MARKS_TABLE)} ("source", "pcode", "hour", "partial")
     SELECT DISTINCT ${quoteLiteral(spec.source)}, "pcode", date_trunc('hour', ${quoteIdent(spec.time)}, 'UTC'), true FROM ${quoteIdent(partition)}`,
  );
}
