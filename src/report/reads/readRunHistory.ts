// The latest runs for the report: what ran, how it ended, its totals over every stream, and why
// it failed.
import type { SqlHandle } from "../../db/driver/exec.ts";
import { RUN_ERROR_KEY } from "../../db/ledger/finishRun.ts";
import { runAliveSql } from "../../db/ledger/markInterruptedRuns.ts";

export interface RunHistoryEntry {
  readonly id: number;
  readonly command: string;
  readonly status: string;
  readonly startedAt: number;
  readonly finishedAt: number | null;
  /** For a `running` run: whether a live process still holds it (false: it died). */
  readonly alive: boolean;
  readonly windows: number;
  readonly rows: number;
  readonly failed: number;
  readonly truncated: number;
  /**
   * The counts are the ledger's windows recorded under the run: it stored none (interrupted,
   * still running, or failed by an error), yet every window it committed is in the ledger.
   */
  readonly fromLedger: boolean;
  /** The error a failed run stored (the server unreachable, the error that stopped it); else null. */
  readonly error: string | null;
  /** The most frequent error of the run's failed windows, and how many windows failed with it. */
  readonly windowError: { readonly text: string; readonly windows: number } | null;
}

type Row = Omit<RunHistoryEntry, "windowError"> & { windowError: string | null; windowErrors: number | null };

/**
 * Newest first. Totals are summed from the per-stream counts a run stores when it finishes; a
 * run that stored none is counted from the ledger (windows whose last recording was this run).
 * sync_windows has no index on run_id: the lateral scans run only for those runs (a one-time
 * filter on the outer row) and for failed or partial ones, at most `limit` of them.
 */
export async function readRunHistory(sql: SqlHandle, limit: number): Promise<RunHistoryEntry[]> {
  const stored = `(r."counts" - '${RUN_ERROR_KEY}')`;
  const total = (key: string) => `coalesce((SELECT sum((v ->> '${key}')::float8) FROM jsonb_each(${stored}) e(k, v)), 0)::float8`;
  const pick = (key: string) => `CASE WHEN l.n IS NULL THEN ${total(key)} ELSE l.${key} END`;
  const rows = await sql.unsafe<Row[]>(
    `SELECT "id"::float8 AS id, "command", "status",
       (extract(epoch from "started_at") * 1000)::float8 AS "startedAt", (extract(epoch from "finished_at") * 1000)::float8 AS "finishedAt",
       ${runAliveSql("r")} AS alive, ${pick("windows")} AS windows, ${pick("rows")} AS rows,
       ${pick("failed")} AS failed, ${pick("truncated")} AS truncated, l.n IS NOT NULL AS "fromLedger",
       r."counts" ->> '${RUN_ERROR_KEY}' AS error, e.error AS "windowError", e.n AS "windowErrors"
     FROM "sync_runs" r
     LEFT JOIN LATERAL (
       SELECT 1 AS n, count(*)::float8 AS windows, coalesce(sum(w."rows_written"), 0)::float8 AS rows,
         count(*) FILTER (WHERE w."status" = 'failed')::float8 AS failed, count(*) FILTER (WHERE w."status" = 'truncated')::float8 AS truncated
       FROM "sync_windows" w WHERE w."run_id" = r."id" AND ${stored} = '{}'::jsonb
     ) l ON ${stored} = '{}'::jsonb
     LEFT JOIN LATERAL (
       SELECT w."error", count(*)::float8 AS n FROM "sync_windows" w
       WHERE w."run_id" = r."id" AND w."status" = 'failed' AND r."status" IN ('failed', 'partial', 'interrupted', 'cancelled')
       GROUP BY w."error" ORDER BY count(*) DESC, w."error" LIMIT 1
     ) e ON true
     ORDER BY "id" DESC LIMIT $1`,
    [limit],
  );
  return rows.map(({ windowError, windowErrors, ...r }) => ({
    ...r,
    windowError: windowError === null ? null : { text: windowError, windows: windowErrors ?? 0 },
  }));
}
