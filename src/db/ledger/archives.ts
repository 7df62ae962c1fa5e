// The archives table (db/schema/ledger.ts): the monthly partitions `prune` wrote to Parquet under
// APM_ARCHIVE before dropping them, with their ledger windows marked `archived` (their status before
// kept in `gone_from`); `restore` reads them and gives the windows that status back.

import { addMonths } from "../../windows/months.ts";
import { KEPT_STATUSES, type WindowStatus } from "../../windows/types.ts";
import { isoTime, type SqlHandle } from "../driver/exec.ts";

export interface ArchiveRow {
  readonly table: string;
  /** The month's first instant, epoch ms. */
  readonly month: number;
  /** Relative to APM_ARCHIVE. */
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  readonly sha256: string;
  readonly contentSha256: string;
  readonly archivedAt?: Date;
}

/**
 * Records `file` (its partition just dropped) and marks `archived` the ledger windows of `streams`
 * starting in its month that hold rows there (not pruned or archived yet); returns how many.
 */
export async function recordArchive(sql: SqlHandle, file: ArchiveRow, streams: readonly string[]): Promise<number> {
  await sql`
    INSERT INTO "archives" ("table_name", "month", "path", "rows", "bytes", "sha256", "content_sha256")
    VALUES (${file.table}, ${isoTime(file.month)}::timestamptz, ${file.path}, ${file.rows}, ${file.bytes}, ${file.sha256}, ${file.contentSha256})
    ON CONFLICT ("table_name", "month") DO UPDATE SET "path" = EXCLUDED."path", "rows" = EXCLUDED."rows", "bytes" = EXCLUDED."bytes",
      "sha256" = EXCLUDED."sha256", "content_sha256" = EXCLUDED."content_sha256", "archived_at" = now()`;
  return markMonthWindows(sql, file.month, streams, sql`"status" = 'archived', "gone_from" = "status"`, KEPT_STATUSES);
}

/** Every archived partition, by table and month (optionally only `tables`). */
export async function readArchives(sql: SqlHandle, tables?: readonly string[]): Promise<ArchiveRow[]> {
  const rows = await sql<Record<string, unknown>[]>`
    SELECT "table_name", (extract(epoch FROM "month") * 1000)::float8 AS month, "path", "rows"::float8 AS rows,
      "bytes"::float8 AS bytes, "sha256", "content_sha256", "archived_at"
    FROM "archives" WHERE ${tables === undefined} OR "table_name" = ANY(${(tables ?? []) as string[]}::text[])
    ORDER BY "table_name", "month"`;
  return rows.map((r) => ({
    table: r.table_name as string,
    month: r.month as number,
    path: r.path as string,
    rows: r.rows as number,
    bytes: r.bytes as number,
    sha256: r.sha256 as string,
    contentSha256: r.content_sha256 as string,
    archivedAt: r.archived_at as Date,
  }));
}

/**
 * After `restore`: the archive's row goes, its windows of `streams` in the month get back the status
 * they had when archived (done, failed or truncated: a gap or a cut window stays one); a window
 * archived before that status was kept becomes done. Returns how many.
 */
export async function unrecordArchive(sql: SqlHandle, file: ArchiveRow, streams: readonly string[]): Promise<number> {
  await sql`DELETE FROM "archives" WHERE "table_name" = ${file.table} AND "month" = ${isoTime(file.month)}::timestamptz`;
  return markMonthWindows(sql, file.month, streams, sql`"status" = coalesce("gone_from", 'done'), "gone_from" = NULL`, ["archived"]);
}

/** Updates with `set` the windows of `streams` starting in `month` whose status is one of `from`; returns how many. */
async function markMonthWindows(
  sql: SqlHandle,
  month: number,
  streams: readonly string[],
  set: ReturnType<SqlHandle>,
  from: readonly WindowStatus[],
): Promise<number> {
  if (streams.length === 0) return 0;
  const marked = await sql`
    UPDATE "sync_windows" SET ${set}
    WHERE "stream" = ANY(${streams as string[]}::text[]) AND "window_start" >= ${isoTime(month)}::timestamptz
      AND "window_start" < ${isoTime(addMonths(month, 1))}::timestamptz AND "status" = ANY(${from as string[]}::text[])`;
  return marked.count;
}
