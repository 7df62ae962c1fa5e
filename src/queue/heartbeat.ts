// Dead-worker recovery. graphile-worker unlocks a job whose worker died only after 4 hours; this
// brings that down to APM_WORKER_RECOVERY: every worker process touches a heartbeat row per queue
// worker id every few seconds, and each one sweeps: the jobs locked by a worker not seen for the
// recovery time (or never seen, and locked that long) are unlocked with graphile-worker's own
// forceUnlockWorkers, so that a live worker runs them again. graphile-worker counts an attempt
// when a job is locked, so a job whose worker died on its last attempt would be left unlocked but
// never run again, with no error, and `worker --until-idle` would not wait for it: such a job gets
// one more attempt (a worker's death is not the job's failure), up to CRASH_ATTEMPTS in all, after
// which it fails for good with the reason (a job that takes every worker down with it).
import { hostname } from "node:os";
import type { WorkerUtils } from "graphile-worker";
import type postgres from "postgres";
import { describeError } from "../engine/describe-error.ts";
import type { Logger } from "../util/logger.ts";
import { MAX_ATTEMPTS } from "./enqueue.ts";

/** Attempts a job whose workers keep dying gets in all before it fails for good. */
export const CRASH_ATTEMPTS = 2 * MAX_ATTEMPTS;

export interface Heartbeat {
  /** A queue worker id of this process (graphile-worker's `worker:create`). */
  add(workerId: string): void;
  /** Stops touching, and removes this process's rows (a clean exit is not a dead worker). */
  stop(): Promise<void>;
}

export interface HeartbeatOptions {
  readonly sql: postgres.Sql;
  readonly utils: Pick<WorkerUtils, "forceUnlockWorkers" | "withPgClient" | "rescheduleJobs" | "permanentlyFailJobs">;
  /** The queue's schema. */
  readonly schema: string;
  readonly runId: number;
  readonly recoveryMs: number;
  readonly logger: Logger;
}

export function startHeartbeat(opts: HeartbeatOptions): Heartbeat {
  const ids = new Set<string>();
  const everyMs = Math.min(15_000, Math.max(500, Math.floor(opts.recoveryMs / 4)));
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      await touch(opts, [...ids]);
      const dead = await staleWorkers(opts);
      // Rows of workers long gone that held nothing: keep the table to the recent ones.
      await opts.sql`DELETE FROM worker_heartbeats WHERE seen_at < now() - make_interval(secs => ${(3 * opts.recoveryMs) / 1000})`;
      if (dead.length > 0) {
        const lastTries = await lastAttempts(opts, dead);
        await opts.utils.forceUnlockWorkers(dead);
        await giveAttemptsBack(opts, lastTries);
        await opts.sql`DELETE FROM worker_heartbeats WHERE worker_id = ANY(${dead}::text[])`;
        opts.logger.warn(
          `unlocked the jobs of ${dead.length} worker(s) not seen for ${Math.round(opts.recoveryMs / 1000)} s (APM_WORKER_RECOVERY): ${dead.join(", ")}; they run again`,
        );
      }
    } catch (e) {
      // The database may be away for a moment; the next tick tries again.
      opts.logger.warn(`worker heartbeat: ${describeError(e)}`);
    }
  };
  const timer = setInterval(() => {
    running = running.then(tick);
  }, everyMs);
  return {
    add: (id) => {
      ids.add(id);
      running = running.then(tick);
    },
    stop: async () => {
      clearInterval(timer);
      await running;
      if (ids.size > 0) await opts.sql`DELETE FROM worker_heartbeats WHERE worker_id = ANY(${[...ids]}::text[])`.catch(() => {});
    },
  };
}

async function touch(opts: HeartbeatOptions, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await opts.sql`
    INSERT INTO worker_heartbeats (worker_id, host, pid, run_id)
    SELECT id, ${hostname()}, ${process.pid}, ${opts.runId} FROM unnest(${ids}::text[]) AS id
    ON CONFLICT (worker_id) DO UPDATE SET seen_at = now()`;
}

/** The jobs `dead` workers hold on their last attempt: unlocked, graphile-worker would never run them again. */
async function lastAttempts(opts: HeartbeatOptions, dead: string[]): Promise<{ id: string; key: string; attempts: number }[]> {
  return opts.utils.withPgClient(async (client) => {
    const { rows } = await client.query<{ id: string; key: string | null; attempts: number }>(
      `SELECT id::text, key, attempts FROM "${opts.schema}".jobs WHERE locked_by = ANY($1::text[]) AND attempts >= max_attempts`,
      [dead],
    );
    return rows.map((r) => ({ id: r.id, key: r.key ?? `job ${r.id}`, attempts: r.attempts }));
  });
}

/** One more attempt for each job whose worker died on its last one; failed for good, with why, past CRASH_ATTEMPTS. */
async function giveAttemptsBack(opts: HeartbeatOptions, jobs: { id: string; key: string; attempts: number }[]): Promise<void> {
  for (const job of jobs) {
    if (job.attempts < CRASH_ATTEMPTS) {
      await opts.utils.rescheduleJobs([job.id], { maxAttempts: job.attempts + 1 });
      opts.logger.warn(`${job.key}: its worker died during its last attempt (${job.attempts}); it gets one more`);
      continue;
    }
    const why = `its worker died during each of its last attempts (${job.attempts}): failed for good; see the workers' logs (memory: APM_CONCURRENCY, APM_MEMORY_BUDGET), then enqueue it again`;
    await opts.utils.permanentlyFailJobs([job.id], why);
    opts.logger.error(`${job.key}: ${why}`);
  }
}

/** Workers whose jobs or queues are locked but who have not been seen for the recovery time. */
async function staleWorkers(opts: HeartbeatOptions): Promise<string[]> {
  const seconds = opts.recoveryMs / 1000;
  const alive = await opts.sql<{ worker_id: string }[]>`
    SELECT worker_id FROM worker_heartbeats WHERE seen_at >= now() - make_interval(secs => ${seconds})`;
  const fresh = alive.map((r) => r.worker_id);
  return opts.utils.withPgClient(async (client) => {
    const { rows } = await client.query<{ locked_by: string }>(
      `SELECT DISTINCT locked_by FROM "${opts.schema}".jobs
       WHERE locked_by IS NOT NULL AND locked_at < now() - make_interval(secs => $1) AND NOT (locked_by = ANY($2::text[]))`,
      [seconds, fresh],
    );
    return rows.map((r) => r.locked_by);
  });
}
