// Windows in flight (sync_attempts): a window's row is written as its fetch begins and removed
// by the transaction that writes it or records it failed. A row a run that died leaves behind is a
// window that was in flight when its process stopped: counted at the next run's start, and a
// window counted twice is not fetched by a sync again (engine/run-windowed.ts), so that one window
// that brings the process down cannot take every later run, and every other stream, with it.
import { isoTime, type SqlHandle } from "../driver/exec.ts";

/** One window of one stream of one project. */
export interface WindowKey {
  readonly stream: string;
  readonly pcode: number;
  readonly partition: string;
  readonly start: number;
  readonly end: number;
}

/** Crashes after which a sync no longer fetches a window by itself. */
export const CRASHES_TO_SKIP = 2;

/**
 * Notes that run `runId` is fetching `windows` (their crash counts stay), in one statement: the
 * engine notes together the windows that start while a note is being written (one commit for
 * several, engine/run-windowed.ts). A window given twice is noted once (DISTINCT: an upsert may
 * not touch one row twice).
 */
export async function markInFlight(sql: SqlHandle, windows: readonly WindowKey[], runId: number | null): Promise<void> {
  if (windows.length === 0) return;
  const rows = windows.map((w) => ({
    stream: w.stream,
    pcode: w.pcode,
    partition: w.partition,
    window_start: isoTime(w.start),
    window_end: isoTime(w.end),
  }));
  await sql`
    INSERT INTO "sync_attempts" ("stream", "pcode", "partition", "window_start", "window_end", "run_id")
    SELECT DISTINCT w.*, ${runId}::bigint
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS w("stream" text, "pcode" bigint, "partition" text, "window_start" timestamptz, "window_end" timestamptz)
    ON CONFLICT ("stream", "pcode", "partition", "window_start", "window_end")
    DO UPDATE SET "run_id" = EXCLUDED."run_id", "updated_at" = now()`.execute();
}

/**
 * Removes the row of `w`: every row where the window was written (it no longer brings anything
 * down), only run `runId`'s where it was recorded failed (`runId` given): a window skipped for
 * its crashes keeps its count.
 */
export async function clearInFlight(sql: SqlHandle, w: WindowKey, runId?: number | null): Promise<void> {
  const onlyRun = runId !== undefined;
  await sql`
    DELETE FROM "sync_attempts"
    WHERE "stream" = ${w.stream} AND "pcode" = ${w.pcode}::bigint AND "partition" = ${w.partition}
      AND "window_start" = ${isoTime(w.start)}::timestamptz AND "window_end" = ${isoTime(w.end)}::timestamptz
      AND (NOT ${onlyRun}::boolean OR "run_id" IS NOT DISTINCT FROM ${runId ?? null}::bigint)`.execute();
}

/**
 * At a run's start, after dead runs were marked `interrupted`: their windows in flight count one
 * crash each (once: the run is let go of); rows left by runs that ended otherwise (a stop that
 * abandoned its windows) are dropped. Returns the windows counted.
 */
export async function countCrashes(sql: SqlHandle): Promise<number> {
  const [counted] = await Promise.all([
    sql`
      UPDATE "sync_attempts" a SET "crashes" = a."crashes" + 1, "run_id" = NULL, "updated_at" = now()
      FROM "sync_runs" r WHERE a."run_id" = r."id" AND r."status" = 'interrupted'`.execute(),
    sql`
      DELETE FROM "sync_attempts" a USING "sync_runs" r
      WHERE a."run_id" = r."id" AND r."status" NOT IN ('running', 'interrupted')`.execute(),
  ]);
  return counted.count;
}

/** The windows of a target (their starts) in flight at CRASHES_TO_SKIP crashes or more, with their counts. */
export async function readCrashed(
  sql: SqlHandle,
  target: { readonly stream: string; readonly pcode: number; readonly partition: string },
): Promise<Map<number, number>> {
  const rows = await sql<{ start: Date; crashes: number }[]>`
    SELECT "window_start" AS start, "crashes" FROM "sync_attempts"
    WHERE "stream" = ${target.stream} AND "pcode" = ${target.pcode}::bigint AND "partition" = ${target.partition}
      AND "crashes" >= ${CRASHES_TO_SKIP}::int`;
  return new Map(rows.map((r) => [r.start.getTime(), r.crashes]));
}

/** Forgets the crashes of a target's windows inside [from, to) (`reset`: they are fetched again). */
export async function clearCrashes(
  sql: SqlHandle,
  target: { readonly stream: string; readonly pcode: number; readonly partition?: string },
  from: number,
  to: number,
): Promise<void> {
  await sql`
    DELETE FROM "sync_attempts"
    WHERE "stream" = ${target.stream} AND "pcode" = ${target.pcode}::bigint
      AND (${target.partition ?? null}::text IS NULL OR "partition" = ${target.partition ?? null}::text)
      AND "window_start" < ${isoTime(to)}::timestamptz AND "window_end" > ${isoTime(from)}::timestamptz`.execute();
}
