// What `status` shows: per project and stream, from the stream_freshness view and the ledger.
import type { SqlHandle } from "../../db/driver/exec.ts";
import { type ArchiveRow, readArchives } from "../../db/ledger/archives.ts";
import { runAliveSql } from "../../db/ledger/markInterruptedRuns.ts";
import { readLastVerification, type VerificationRow } from "../../db/ledger/verifications.ts";
import { GONE_STATUSES } from "../../windows/types.ts";

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
  /** Windows whose rows `prune` dropped (the retention), archived first or not: accounted for, not missing. */
  readonly prunedWindows: number;
  /** End of the latest pruned window: before it the stream's rows are gone. */
  readonly prunedUntil: Date | null;
}

/**
 * Failed windows of one stream and project that failed alike: the same error once the request's
 * location (` [op (project N) /path?stime=..]`, which differs per window) is taken out.
 */
export interface FailureRow {
  readonly pcode: number;
  readonly stream: string;
  /** The error line without the location of the request. */
  readonly error: string;
  readonly windows: number;
  readonly firstStart: Date;
  readonly lastEnd: Date;
  readonly lastFinishedAt: Date | null;
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

/** Time no window of a windowed stream covers, between its first and last window (the ledger_gaps view). */
export interface LedgerHole {
  readonly pcode: number;
  readonly stream: string;
  readonly partition: string;
  readonly start: Date;
  readonly end: Date;
}

export interface StatusReport {
  readonly streams: StreamStatus[];
  /** Every hole of the ledger, by project, stream, partition and time. */
  readonly holes: LedgerHole[];
  /** Every failed window of the ledger, counted by stream, project and error (none left out). */
  readonly failures: FailureRow[];
  readonly lastRun: LastRun | null;
  /** The latest `apm-sync verify`: when the copy was last proven, over which range (null: never). */
  readonly lastVerification?: VerificationRow | null;
  /** The months `prune` archived to Parquet (APM_ARCHIVE), by table and month. */
  readonly archives?: readonly ArchiveRow[];
}

// ApiError appends ` [<op id>[ (project N)] <path and query>]` to its message (src/api/errors.ts);
// the query holds the window, so without this every failed window would read differently.
const LOCATION = " \\[[A-Za-z0-9_.-]+( \\(project [0-9]+\\))? /[^] ]*\\]";

/** `now` comes from the caller (lag is measured against the job's clock, not the database's). */
export async function readStatus(sql: SqlHandle, now: number): Promise<StatusReport> {
  const streams = await sql<Record<string, unknown>[]>`
    SELECT "pcode"::float8 AS pcode, "stream", "watermark", "last_finished_at",
      "done_windows"::int AS done, "failed_windows"::int AS failed, "truncated_windows"::int AS truncated,
      "quarantined_records"::int AS quarantined
    FROM "stream_freshness" ORDER BY "pcode", "stream"`;
  const pruned = await sql<{ pcode: number; stream: string; windows: number; until: Date }[]>`
    SELECT "pcode"::float8 AS pcode, "stream", count(*)::int AS windows, max("window_end") AS until
    FROM "sync_windows" WHERE "status" = ANY(${GONE_STATUSES as readonly string[] as string[]}::text[]) GROUP BY 1, 2`;
  const prunedOf = new Map(pruned.map((p) => [`${p.pcode}/${p.stream}`, p]));
  const failures = await sql<FailureRow[]>`
    SELECT "pcode"::float8 AS pcode, "stream", regexp_replace(coalesce("error", '?'), ${LOCATION}, '', 'g') AS error,
      count(*)::int AS windows, min("window_start") AS "firstStart", max("window_end") AS "lastEnd", max("finished_at") AS "lastFinishedAt"
    FROM "sync_windows" WHERE "status" = 'failed' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  const holes = await sql<LedgerHole[]>`
    SELECT "pcode"::float8 AS pcode, "stream", "partition", "gap_start" AS start, "gap_end" AS "end"
    FROM "ledger_gaps" WHERE "kind" = 'hole' ORDER BY 1, 2, 3, 4`;
  const [run] = await sql.unsafe<Record<string, unknown>[]>(
    `SELECT "id"::float8 AS id, "command", "status", "started_at", "finished_at", ${runAliveSql("r")} AS alive
     FROM "sync_runs" r ORDER BY "id" DESC LIMIT 1`,
  );
  return {
    streams: streams.map((r) => streamStatus(r, now, prunedOf.get(`${r.pcode}/${r.stream}`))),
    holes: [...holes],
    failures: [...failures],
    lastRun: run ? lastRunOf(run) : null,
    lastVerification: await readLastVerification(sql),
    archives: await readArchives(sql),
  };
}

/** A row of stream_freshness as the report's stream, with its lag at `now` and what was pruned of it. */
function streamStatus(r: Record<string, unknown>, now: number, pruned: { windows: number; until: Date } | undefined) {
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
    prunedWindows: pruned?.windows ?? 0,
    prunedUntil: pruned?.until ?? null,
  };
}

function lastRunOf(run: Record<string, unknown>) {
  return {
    id: run.id as number,
    command: run.command as string,
    status: run.status as string,
    startedAt: run.started_at as Date,
    finishedAt: (run.finished_at as Date | null) ?? null,
    alive: run.alive as boolean,
  };
}
