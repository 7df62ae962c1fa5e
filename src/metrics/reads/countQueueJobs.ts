// The job queue by state for the metrics: counts only (a scrape must not read every job row),
// from graphile-worker's public `jobs` view in the queue schema, in the states `status` uses (queue/read-queue.ts JOB_STATE).
import type { SqlHandle } from "../../db/driver/exec.ts";
import { quoteIdent } from "../../db/sqlText.ts";
import { JOB_STATE, OUR_JOBS } from "../../queue/read-queue.ts";

export interface QueueJobCounts {
  /** Waiting for their first attempt. */
  readonly queued: number;
  /** Locked by a worker now. */
  readonly running: number;
  /** Failed an attempt; waiting for their retry. */
  readonly retrying: number;
  /** Out of attempts: failed for good. */
  readonly failed: number;
}

/** apm-sync jobs of the queue in `schema` by state; null when there is no queue (never migrated). */
export async function countQueueJobs(sql: SqlHandle, schema: string): Promise<QueueJobCounts | null> {
  const [exists] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`${quoteIdent(schema)}.jobs`}) AS t`;
  if (!exists?.t) return null;
  const [row] = await sql.unsafe<{ queued: number; running: number; retrying: number; failed: number }[]>(
    `SELECT count(*) FILTER (WHERE state = 'queued')::int AS queued, count(*) FILTER (WHERE state = 'running')::int AS running,
            count(*) FILTER (WHERE state = 'retrying')::int AS retrying, count(*) FILTER (WHERE state = 'failed')::int AS failed
     FROM (SELECT ${JOB_STATE} AS state FROM ${quoteIdent(schema)}.jobs WHERE ${OUR_JOBS}) AS j`,
  );
  return { queued: row?.queued ?? 0, running: row?.running ?? 0, retrying: row?.retrying ?? 0, failed: row?.failed ?? 0 };
}
