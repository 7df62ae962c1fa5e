// What the queue holds, read from graphile-worker's public `jobs` view: for `worker --until-idle`
// and for `status`.
import type { WorkerUtils } from "graphile-worker";
import type postgres from "postgres";

export interface IdleState {
  /** apm-sync jobs not failed for good: queued, running, waiting for a retry or for recovery. */
  readonly pending: number;
  /** apm-sync jobs that failed for good since `since`. */
  readonly failedForGood: number;
}

export async function readIdle(utils: Pick<WorkerUtils, "withPgClient">, schema: string, since: Date): Promise<IdleState> {
  return utils.withPgClient(async (client) => {
    const { rows } = await client.query<{ pending: number; failed: number }>(
      // graphile-worker counts an attempt when it locks a job: a job on its last attempt is running
      // (locked), not failed, until it ends unlocked.
      `SELECT count(*) FILTER (WHERE attempts < max_attempts OR locked_by IS NOT NULL)::int AS pending,
              count(*) FILTER (WHERE attempts >= max_attempts AND locked_by IS NULL AND updated_at >= $1)::int AS failed
       FROM "${schema}".jobs WHERE task_identifier LIKE 'apm-sync.%'`,
      [since],
    );
    return { pending: rows[0]?.pending ?? 0, failedForGood: rows[0]?.failed ?? 0 };
  });
}

/** The queue for `status`: null when there is none (embedded database, or never migrated). */
export interface QueueStatus {
  readonly schema: string;
  readonly queued: number;
  /** Jobs that failed an attempt and wait for their retry. */
  readonly retrying: number;
  readonly running: readonly { readonly workerId: string; readonly job: string; readonly since: Date }[];
  readonly failedForGood: readonly { readonly job: string; readonly attempts: number; readonly lastError: string | null }[];
  /** Worker processes seen in the last `recentMs`. */
  readonly workers: readonly { readonly workerId: string; readonly host: string; readonly pid: number; readonly seenAt: Date }[];
}

/** Reads the queue through the warehouse connection (its `jobs` view and worker_heartbeats). */
export async function readQueueStatus(sql: postgres.Sql, schema: string, recentMs: number): Promise<QueueStatus | null> {
  const [exists] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`"${schema}".jobs`}) AS t`;
  if (!exists?.t) return null;
  const jobs = await sql.unsafe<
    {
      key: string | null;
      id: string;
      attempts: number;
      max_attempts: number;
      locked_by: string | null;
      locked_at: Date | null;
      run_at: Date;
      last_error: string | null;
    }[]
  >(
    `SELECT key, id::text, attempts, max_attempts, locked_by, locked_at, run_at, last_error FROM "${schema}".jobs
     WHERE task_identifier LIKE 'apm-sync.%' ORDER BY id`,
  );
  const name = (j: (typeof jobs)[number]) => j.key ?? `job ${j.id}`;
  // A job on its last attempt is running while locked (the attempt is counted when it is locked).
  const live = jobs.filter((j) => j.attempts < j.max_attempts || j.locked_by);
  const workers = await sql<{ worker_id: string; host: string; pid: number; seen_at: Date }[]>`
    SELECT worker_id, host, pid, seen_at FROM worker_heartbeats WHERE seen_at >= now() - make_interval(secs => ${recentMs / 1000})
    ORDER BY host, pid, worker_id`;
  return {
    schema,
    queued: live.filter((j) => !j.locked_by && j.attempts === 0).length,
    retrying: live.filter((j) => !j.locked_by && j.attempts > 0).length,
    running: live.filter((j) => j.locked_by).map((j) => ({ workerId: j.locked_by!, job: name(j), since: j.locked_at! })),
    failedForGood: jobs
      .filter((j) => j.attempts >= j.max_attempts && !j.locked_by)
      .map((j) => ({ job: name(j), attempts: j.attempts, lastError: j.last_error })),
    workers: workers.map((w) => ({ workerId: w.worker_id, host: w.host, pid: w.pid, seenAt: w.seen_at })),
  };
}
