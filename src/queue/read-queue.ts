// What the queue holds, read from graphile-worker's public `jobs` view: for `worker --until-idle`
// and for `status` (and, by its job states, the queue gauges: metrics/reads/countQueueJobs.ts).
import type { WorkerUtils } from "graphile-worker";
import type postgres from "postgres";

/** apm-sync's jobs among the view's (its tasks: spec.ts TASK). */
export const OUR_JOBS = "task_identifier LIKE 'apm-sync.%'";

export type JobState = "queued" | "running" | "retrying" | "failed";

/**
 * A job's state (a row of the `jobs` view), in SQL, for every reader of the queue. graphile-worker
 * counts an attempt when it locks a job: a locked job is running, on its last attempt too, and is
 * failed for good only once it is out of attempts and unlocked.
 */
export const JOB_STATE = `CASE WHEN locked_by IS NOT NULL THEN 'running' WHEN attempts >= max_attempts THEN 'failed'
  WHEN attempts = 0 THEN 'queued' ELSE 'retrying' END`;

export interface IdleState {
  /** apm-sync jobs not failed for good: queued, running, waiting for a retry or for recovery. */
  readonly pending: number;
  /** apm-sync jobs that failed for good since `since`. */
  readonly failedForGood: number;
}

export async function readIdle(utils: Pick<WorkerUtils, "withPgClient">, schema: string, since: Date): Promise<IdleState> {
  return utils.withPgClient(async (client) => {
    const { rows } = await client.query<{ pending: number; failed: number }>(
      `SELECT count(*) FILTER (WHERE state <> 'failed')::int AS pending,
              count(*) FILTER (WHERE state = 'failed' AND updated_at >= $1)::int AS failed
       FROM (SELECT ${JOB_STATE} AS state, updated_at FROM "${schema}".jobs WHERE ${OUR_JOBS}) AS j`,
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
      state: JobState;
      locked_by: string | null;
      locked_at: Date | null;
      last_error: string | null;
    }[]
  >(
    `SELECT key, id::text, attempts, ${JOB_STATE} AS state, locked_by, locked_at, last_error FROM "${schema}".jobs
     WHERE ${OUR_JOBS} ORDER BY id`,
  );
  const name = (j: (typeof jobs)[number]) => j.key ?? `job ${j.id}`;
  const inState = (state: JobState) => jobs.filter((j) => j.state === state);
  const workers = await sql<{ worker_id: string; host: string; pid: number; seen_at: Date }[]>`
    SELECT worker_id, host, pid, seen_at FROM worker_heartbeats WHERE seen_at >= now() - make_interval(secs => ${recentMs / 1000})
    ORDER BY host, pid, worker_id`;
  return {
    schema,
    queued: inState("queued").length,
    retrying: inState("retrying").length,
    running: inState("running").map((j) => ({ workerId: j.locked_by!, job: name(j), since: j.locked_at! })),
    failedForGood: inState("failed").map((j) => ({ job: name(j), attempts: j.attempts, lastError: j.last_error })),
    workers: workers.map((w) => ({ workerId: w.worker_id, host: w.host, pid: w.pid, seenAt: w.seen_at })),
  };
}
