// Dead-worker recovery. graphile-worker unlocks a job whose worker died only after 4 hours; this
// brings that down to APM_WORKER_RECOVERY: every worker process touches a heartbeat row per queue
// worker id every few seconds, and each one sweeps: the jobs locked by a worker not seen for the
// recovery time (or never seen, and locked that long) are unlocked with graphile-worker's own
// forceUnlockWorkers, so that a live worker runs them again.
import { hostname } from "node:os";
import type { WorkerUtils } from "graphile-worker";
import type postgres from "postgres";
import { describeError } from "../engine/describe-error.ts";
import type { Logger } from "../util/logger.ts";

export interface Heartbeat {
  /** A queue worker id of this process (graphile-worker's `worker:create`). */
  add(workerId: string): void;
  /** Stops touching, and removes this process's rows (a clean exit is not a dead worker). */
  stop(): Promise<void>;
}

export interface HeartbeatOptions {
  readonly sql: postgres.Sql;
  readonly utils: Pick<WorkerUtils, "forceUnlockWorkers" | "withPgClient">;
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
        await opts.utils.forceUnlockWorkers(dead);
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
