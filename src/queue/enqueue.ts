// `enqueue backfill|sync`: the work as queued jobs. A backfill becomes one job per stream, project,
// partition and chunk of grain windows; a sync one job per stream, project and partition (and one
// for the account streams). Job keys make enqueueing the same work twice add nothing; chunks whose
// windows the ledger has all done are not queued again unless `refetch` asks for it.
import type { AddJobsJobSpec, WorkerUtils } from "graphile-worker";
import { isAccountStream } from "../catalogue/types.ts";
import { readLedger } from "../db/ledger/readLedger.ts";
import { planSpec } from "../engine/plan-target.ts";
import { plannerNow } from "../engine/server-clock.ts";
import { backfillTargets, projectTargetsOf, selectOperations, selectProjects } from "../engine/targets.ts";
import type { EngineDeps } from "../engine/types.ts";
import { effectiveGrain, planBackfill } from "../windows/plan.ts";
import { queueSchema } from "./queue.ts";
import { type ChunkJob, chunkRange, jobKey, queueName, TASK } from "./spec.ts";

export interface EnqueueResult {
  /** Jobs added now. */
  readonly added: number;
  /** Jobs whose key was queued already (waiting, running or failed for good). */
  readonly existing: number;
  /** Backfill chunks the ledger has complete (not queued; `--refetch` queues them anyway). */
  readonly done: number;
}

/** Attempts of a job before it counts as failed for good (retries back off exponentially). */
export const MAX_ATTEMPTS = 5;

export interface BackfillSelection {
  readonly from: number;
  readonly to: number;
  readonly streams: readonly string[] | null;
  readonly projects: readonly number[] | null;
  readonly chunkMs: number;
  readonly refetch: boolean;
}

/** The chunk jobs of a backfill, minus the chunks the ledger has done already. */
export async function backfillJobs(deps: EngineDeps, sel: BackfillSelection): Promise<{ jobs: ChunkJob[]; done: number }> {
  const now = plannerNow(deps);
  const jobs: ChunkJob[] = [];
  let done = 0;
  for (const target of backfillTargets(deps.config, sel.streams, sel.projects, sel)) {
    const { pcode, partition } = target;
    const spec = planSpec(deps, target);
    const ledger = (await readLedger(deps.database.sql, { stream: target.op.id, pcode, partition })).map((e) => ({
      start: e.windowStart,
      end: e.windowEnd,
      status: e.status,
    }));
    for (const chunk of chunkRange(sel.from, sel.to, sel.chunkMs, effectiveGrain(spec))) {
      // Past the server's clock: nothing to fetch yet.
      if (planBackfill(spec, chunk.from, chunk.to, [], { now }).next().done) continue;
      if (!sel.refetch && planBackfill(spec, chunk.from, chunk.to, ledger, { now, onlyMissing: true }).next().done) {
        done += 1;
        continue;
      }
      const job: ChunkJob = { kind: "backfill", stream: target.op.id, pcode, partition, from: chunk.from, to: chunk.to };
      jobs.push(sel.refetch ? { ...job, refetch: true } : job);
    }
  }
  return { jobs, done };
}

/** One sync job per stream, project and partition, and one for the account streams. */
export function syncJobs(deps: EngineDeps, streams: readonly string[] | null, projects: readonly number[] | null): ChunkJob[] {
  const { config } = deps;
  const ops = selectOperations(streams ?? config.sync.streams, config.sync.inputs);
  const jobs: ChunkJob[] = [];
  if (config.api.accountToken && ops.some(isAccountStream)) jobs.push({ kind: "sync-account" });
  for (const { op, pcode, partition } of projectTargetsOf(config, ops, selectProjects(config, projects)))
    jobs.push({ kind: "sync", stream: op.id, pcode, partition });
  return jobs;
}

/** Adds the jobs whose keys are not queued yet; returns how many were added and how many existed. */
export async function addChunkJobs(
  utils: Pick<WorkerUtils, "addJobs" | "withPgClient">,
  schema: string,
  jobs: readonly ChunkJob[],
): Promise<{ added: number; existing: number }> {
  let added = 0;
  let existing = 0;
  for (let i = 0; i < jobs.length; i += BATCH) {
    const batch = jobs.slice(i, i + BATCH);
    const keys = batch.map(jobKey);
    const queued = await utils.withPgClient(async (client) => {
      const { rows } = await client.query<{ key: string }>(`SELECT key FROM "${schema}".jobs WHERE key = ANY($1::text[])`, [keys]);
      return new Set(rows.map((r) => r.key));
    });
    const fresh: AddJobsJobSpec[] = batch
      .filter((job) => !queued.has(jobKey(job)))
      .map((job) => ({ identifier: TASK.chunk, payload: job, queueName: queueName(job), jobKey: jobKey(job), maxAttempts: MAX_ATTEMPTS }));
    if (fresh.length > 0) await utils.addJobs(fresh, true);
    added += fresh.length;
    existing += batch.length - fresh.length;
  }
  return { added, existing };
}

const BATCH = 500;

/** Queues a backfill. */
export async function enqueueBackfill(deps: EngineDeps, utils: WorkerUtils, sel: BackfillSelection): Promise<EnqueueResult> {
  const { jobs, done } = await backfillJobs(deps, sel);
  return { ...(await addChunkJobs(utils, queueSchema(deps.config), jobs)), done };
}

/** Queues a sync of every selected stream. */
export async function enqueueSync(
  deps: EngineDeps,
  utils: Pick<WorkerUtils, "addJobs" | "withPgClient">,
  streams: readonly string[] | null,
  projects: readonly number[] | null,
): Promise<EnqueueResult> {
  return { ...(await addChunkJobs(utils, queueSchema(deps.config), syncJobs(deps, streams, projects))), done: 0 };
}
