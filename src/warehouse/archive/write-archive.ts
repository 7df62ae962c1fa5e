// Writes one monthly partition to `<archive>/<table>/month=YYYY-MM/part-0.parquet` (hive layout:
// DuckDB, Spark, Polars and pandas read the directory as one table with a `month` column) before
// `prune` drops it. Rows come out of a cursor in batches and each batch is one row group, so memory
// holds one batch whatever the month's size (hyparquet-writer flushes its buffer to the file past
// 1 MB). The file is written under a temporary name, read back (its rows decoded, counted and
// digested the same way as they were read from the partition) and only then renamed: a file that
// could not be written or does not read back the same throws, and the partition stays.

import { createHash } from "node:crypto";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ParquetWriter } from "hyparquet-writer";
import { fileWriter } from "hyparquet-writer/src/node.js";
import type postgres from "postgres";
import type { ArchiveRow } from "../../db/ledger/archives.ts";
import { partitionName } from "../../db/partitions/partitionName.ts";
import { quoteIdent } from "../../db/sqlText.ts";
import { monthName } from "../../windows/months.ts";
import { type ArchiveColumn, archiveColumns, type ParquetValue, parquetSchema } from "./columns.ts";
import { fileSha256, readBack, rowDigest } from "./read-archive.ts";

/** A month written and checked: what the archives table records of it. */
export type ArchivedFile = Omit<ArchiveRow, "archivedAt">;

export interface ArchiveOptions {
  readonly dir: string;
  /** Called with the temporary file once written, before it is read back (tests break it there). */
  readonly afterWrite?: (tempPath: string) => Promise<void>;
}

const CURSOR = "apm_archive_rows";
/** A batch (one row group) aims at this many characters of text. */
const BATCH_CHARS = 2 * 1024 * 1024;
const FIRST_BATCH = 500;
const MAX_BATCH = 50_000;

/** `stat_sql/month=2026-03/part-0.parquet`. */
export function archivePath(table: string, month: number): string {
  return join(table, `month=${monthName(month)}`, "part-0.parquet");
}

/** Writes, checks and renames the file of `table`'s partition of `month`; throws (nothing left behind) when it cannot. */
export async function archivePartition(sql: postgres.Sql, table: string, month: number, opts: ArchiveOptions): Promise<ArchivedFile> {
  const columns = archiveColumns(table);
  const path = archivePath(table, month);
  const final = join(opts.dir, path);
  const temp = `${final}.tmp-${process.pid}`;
  await mkdir(dirname(final), { recursive: true });
  try {
    const written = await writeFile(sql, partitionName(table, month), columns, temp);
    await opts.afterWrite?.(temp);
    const back = await readBack(temp, columns);
    if (back.rows !== written.rows || back.contentSha256 !== written.contentSha256)
      throw new Error(
        `${path}: read back ${back.rows} row(s) (digest ${back.contentSha256.slice(0, 12)}), wrote ${written.rows} (digest ${written.contentSha256.slice(0, 12)})`,
      );
    const [sha256, size] = await Promise.all([fileSha256(temp), stat(temp)]);
    await rename(temp, final);
    return { table, month, path, rows: written.rows, bytes: size.size, sha256, contentSha256: written.contentSha256 };
  } finally {
    await rm(temp, { force: true });
  }
}

/** Streams the partition's rows into a Parquet file; returns how many and their digest. */
async function writeFile(
  sql: postgres.Sql,
  partition: string,
  columns: readonly ArchiveColumn[],
  path: string,
): Promise<{ rows: number; contentSha256: string }> {
  const writer = new ParquetWriter({ writer: fileWriter(path), schema: parquetSchema(columns), codec: "SNAPPY", createdBy: "apm-sync" });
  const digest = createHash("sha256");
  let rows = 0;
  await sql.begin(async (tx) => {
    const select = columns.map((c) => c.select).join(", ");
    await tx.unsafe(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR SELECT ${select} FROM ${quoteIdent(partition)}`);
    for (let size = FIRST_BATCH; ; ) {
      const batch = (await tx.unsafe(`FETCH ${size} FROM ${CURSOR}`).values()) as unknown as (string | string[] | null)[][];
      if (batch.length === 0) break;
      const values = batch.map((r) => r.map((v, i) => columns[i]!.fromSql(v)));
      let chars = 0;
      for (const row of values) {
        const part = rowDigest(columns, row);
        chars += part.length;
        digest.update(part);
      }
      const columnData = columns.map((c, i) => ({ name: c.name, data: values.map((r) => r[i]) as ParquetValue[] }));
      await writer.write({ columnData: columnData as never, rowGroupSize: values.length });
      rows += values.length;
      size = Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_CHARS / Math.max(1, chars / values.length))));
    }
    await tx.unsafe(`CLOSE ${CURSOR}`);
  });
  writer.finish();
  return { rows, contentSha256: digest.digest("hex") };
}
