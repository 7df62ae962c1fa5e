// What `status` shows: per project and stream, from the stream_freshness view and the ledger.
import type { SqlHandle } from "./exec.ts";
import { runAliveSql } from "./markInterruptedRuns.ts";

export interface StreamStatus {
  readonly pcode: number;
  readonly stream: string;
  readonly watermark: Date | null;
  readonly lagSeconds: number | null;
  readonly lastFinishedAt: Date | null;
  readonly doneWindows: number;
  readonly failedWindows: number;
  readonly truncatedWindows: number;
  readonly quarantinedRecords: number;
}

export interface FailedWindow {
  readonly pcode: number;
  readonly stream: string;
  readonly windowStart: Date;
  readonly windowEnd: Date;
  readonly error: string | null;
  readonly finishedAt: Date | null;
}

export interface LastRun {
  readonly id: number;
  readonly command: string;
  readonly status: string;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  /** For a `running` run: whether a live process still holds it (false: it died). */
  readonly alive: boolean;
}

export interface StatusReport {
  readonly streams: StreamStatus[];
  readonly failed: FailedWindow[];
  readonly lastRun: LastRun | null;
}

/** `now` comes from the caller (lag is measured against the job's clock, not the database's). */
export async function readStatus(sql: SqlHandle, now: number, failedLimit = 200): Promise<StatusReport> {
  const streams = await sql<Record<string, unknown>[]>`
    SELECT "pcode"::float8 AS pcode, "stream", "watermark", "last_finished_at",
      "done_windows"::int AS done, "failed_windows"::int AS failed, "truncated_windows"::int AS truncated,
      "quarantined_records"::int AS quarantined
    FROM "stream_freshness" ORDER BY "pcode", "stream"`;
  const failed = await sql<Record<string, unknown>[]>`
    SELECT "pcode"::float8 AS pcode, "stream", "window_start", "window_end", "error", "finished_at"
    FROM "sync_windows" WHERE "status" = 'failed' ORDER BY "pcode", "stream", "window_start" LIMIT ${failedLimit}`;
  const [run] = await sql.unsafe<Record<string, unknown>[]>(
    `SELECT "id"::float8 AS id, "command", "status", "started_at", "finished_at", ${runAliveSql("r")} AS alive
     FROM "sync_runs" r ORDER BY "id" DESC LIMIT 1`,
  );
  return {
    streams: streams.map((r) => {
      const watermark = (r.watermark as Date | null) ?? null;
      return {
        pcode: r.pcode as number,
        stream: r.stream as string,
        watermark,
        lagSeconds: watermark ? Math.max(0, Math.round((now - watermark.getTime()) / 1000)) : null,
        lastFinishedAt: (r.last_finished_at as Date | null) ?? null,
        doneWindows: r.done as number,
        failedWindows: r.failed as number,
        truncatedWindows: r.truncated as number,
        quarantinedRecords: r.quarantined as number,
      };
    }),
    failed: failed.map((r) => ({
      pcode: r.pcode as number,
      stream: r.stream as string,
      windowStart: r.window_start as Date,
      windowEnd: r.window_end as Date,
      error: (r.error as string | null) ?? null,
      finishedAt: (r.finished_at as Date | null) ?? null,
    })),
    lastRun: run
      ? {
          id: run.id as number,
          command: run.command as string,
          status: run.status as string,
          startedAt: run.started_at as Date,
          finishedAt: (run.finished_at as Date | null) ?? null,
          alive: run.alive as boolean,
        }
      : null,
  };
}
