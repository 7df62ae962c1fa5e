// The job queue by state for the metrics: counts only (a scrape must not read every job row),
// from graphile-worker's public `jobs` view in the queue schema, with the states `status` uses.
import type { SqlHandle } from "../../db/driver/exec.ts";
import { quoteIdent } from "../../db/sqlText.ts";

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
  // A locked job is running, its last attempt too (graphile-worker counts an attempt when it locks a job).
  const [row] = await sql.unsafe<{ queued: number; running: number; retrying: number; failed: number }[]>(
    `SELECT count(*) FILTER (WHERE attempts < max_attempts AND locked_by IS NULL AND attempts = 0)::int AS queued,
            count(*) FILTER (WHERE locked_by IS NOT NULL)::int AS running,
            count(*) FILTER (WHERE attempts < max_attempts AND locked_by IS NULL AND attempts > 0)::int AS retrying,
            count(*) FILTER (WHERE attempts >= max_attempts AND locked_by IS NULL)::int AS failed
     FROM ${quoteIdent(schema)}.jobs WHERE task_identifier LIKE 'apm-sync.%'`,
  );
  return { queued: row?.queued ?? 0, running: row?.running ?? 0, retrying: row?.retrying ?? 0, failed: row?.failed ?? 0 };
}
