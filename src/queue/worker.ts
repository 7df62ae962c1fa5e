// `apm-sync worker`: runs queued jobs with the same engine, ledger, locks and rate governor as the
// CLI. One sync_runs row per worker process (command `worker`, held by its lock while the process
// lives); each job runs its targets under that run id. A job that did not finish (a failed window,
// a stream another run was writing, a signal) throws, so the queue runs it again later with
// backoff; after MAX_ATTEMPTS it counts as failed for good.
import { EventEmitter } from "node:events";
import {
  type JobHelpers,
  makeWorkerUtils,
  parseCronItems,
  type Runner,
  run,
  type TaskList,
  type WorkerEvents,
  type WorkerUtils,
} from "graphile-worker";
import { finishRun } from "../db/ledger/finishRun.ts";
import { startRun } from "../db/ledger/startRun.ts";
import { runStatus, withRun } from "../engine/recorded-run.ts";
import { refreshAfterRun } from "../engine/refresh-rollups.ts";
import { runTargets, type TargetsResult } from "../engine/run.ts";
import { addCounts, addToTotals, type EngineDeps, emptyCounts, type StreamCounts } from "../engine/types.ts";
import { packageVersion } from "../util/package-root.ts";
import { pruneAtEnd } from "../warehouse/prune-report.ts";
import { enqueueSync } from "./enqueue.ts";
import { startHeartbeat } from "./heartbeat.ts";
import { type QueueOptions, queueSchema, withQueuePool } from "./queue.ts";
import { readIdle } from "./read-queue.ts";
import { describeJob, parseChunkJob, requestOf, TASK } from "./spec.ts";

export interface WorkerOptions {
  /** Jobs run at once by this process. */
  readonly concurrency: number;
  /** Exit once nothing is queued, running or waiting for recovery. */
  readonly untilIdle: boolean;
  /** Called after each job, done or not (the worker pushes its gauges: jobs/worker.ts). */
  readonly afterJob?: () => void;
}

export interface WorkerResult {
  readonly runId: number;
  readonly jobs: { readonly done: number; readonly retried: number };
  /** Jobs that failed for good while this worker ran (exit 1 with --until-idle). */
  readonly failedForGood: number;
  readonly streams: ReadonlyMap<string, StreamCounts>;
}

export async function runWorker(deps: EngineDeps, opts: WorkerOptions): Promise<WorkerResult> {
  return withQueuePool(deps.config, deps.logger, async (queue) => {
    const utils = await makeWorkerUtils(queue);
    try {
      await utils.migrate();
      return await work(deps, utils, queue, opts);
    } finally {
      await utils.release();
    }
  });
}

async function work(deps: EngineDeps, utils: WorkerUtils, queue: QueueOptions, opts: WorkerOptions): Promise<WorkerResult> {
  const { config, logger, database } = deps;
  const schedule = config.queue.schedule;
  const args = { concurrency: opts.concurrency, untilIdle: opts.untilIdle, schedule };
  return withRun(deps, "worker", args, async (runId) => {
    const totals = new Map<string, StreamCounts>();
    const jobs = { done: 0, retried: 0 };
    const startedAt = new Date();
    const events: WorkerEvents = new EventEmitter();
    const heartbeat = startHeartbeat({
      sql: database.sql,
      utils,
      schema: queue.schema,
      runId,
      recoveryMs: config.queue.recoveryMs,
      logger,
    });
    // Jobs are locked by the pool's id (graphile-worker 0.17 fetches them for the pool), so the
    // pool is what must be seen alive; its workers' ids are touched as well.
    events.on("pool:create", ({ workerPool }) => heartbeat.add(workerPool.id));
    events.on("worker:create", ({ worker }) => heartbeat.add(worker.workerId));
    const runner = await run({
      ...queue,
      concurrency: opts.concurrency,
      noHandleSignals: true,
      pollInterval: 1_000,
      taskList: tasks(deps, runId, totals, jobs, opts.afterJob),
      events,
      parsedCronItems: schedule
        ? parseCronItems([
            { task: TASK.schedule, match: schedule, identifier: "apm-sync-schedule", options: { backfillPeriod: 0, maxAttempts: 1 } },
          ])
        : [],
    });
    logger.info(
      `worker: ${opts.concurrency} job(s) at once${schedule ? `, sync scheduled at "${schedule}"` : ""}; jobs of a worker not seen for ${Math.round(config.queue.recoveryMs / 1000)} s run again elsewhere`,
    );
    await untilStopped(deps, utils, runner, opts.untilIdle ? startedAt : null).finally(() => heartbeat.stop());
    const failedForGood = await readIdle(utils, queue.schema, startedAt).then((s) => s.failedForGood);
    const status = runStatus({ cancelled: deps.stopping?.aborted === true, failed: failedForGood > 0 });
    return { status, counts: totals, value: { runId, jobs, failedForGood, streams: totals } };
  });
}

/** The worker's tasks: a chunk of a sync or backfill (its counts added to `totals`), and the schedule's tick. */
function tasks(
  deps: EngineDeps,
  runId: number,
  totals: Map<string, StreamCounts>,
  jobs: { done: number; retried: number },
  afterJob: (() => void) | undefined,
): TaskList {
  const { logger, database } = deps;
  return {
    [TASK.chunk]: async (payload) => {
      const job = parseChunkJob(payload);
      // A server found unreachable by an earlier job is tried again by this one.
      deps.client.reconnect();
      const result = await runTargets(deps, requestOf(job), runId).finally(() => afterJob?.());
      for (const [stream, counts] of result.streams) addToTotals(totals, stream, counts);
      // Each job's marks are refreshed by the worker that wrote them (another worker refreshing
      // the same rollup leaves them to it); the views are exact meanwhile.
      await refreshAfterRun(deps);
      const unfinished = whyUnfinished(result);
      if (unfinished) {
        jobs.retried += 1;
        throw new Error(`${describeJob(job)}: ${unfinished}`);
      }
      jobs.done += 1;
      const c = emptyCounts();
      for (const counts of result.streams.values()) addCounts(c, counts);
      logger.info(`done: ${describeJob(job)}: ${c.windows} window(s), ${c.rows} row(s), ${c.requests} request(s)`);
    },
    [TASK.schedule]: async (payload, helpers: JobHelpers) => {
      const tick = (payload as { _cron?: { ts?: string } })._cron?.ts ?? new Date().toISOString();
      const tickRun = await startRun(database.sql, { command: "schedule", args: { tick }, version: packageVersion() });
      const added = await enqueueSync(deps, helpers, null, null);
      await finishRun(database.sql, tickRun, "ok", { added: added.added, existing: added.existing });
      logger.info(`schedule ${tick}: ${added.added} sync job(s) queued, ${added.existing} already queued`);
      await refreshAfterRun(deps);
      await pruneAtEnd(deps, { print: (text, record) => logger.info(record ?? {}, text) }, Date.now());
    },
  };
}

/** Waits for the runner to end: on a signal, or (`idleSince` given) once nothing is left to do. */
async function untilStopped(deps: EngineDeps, utils: WorkerUtils, runner: Runner, idleSince: Date | null): Promise<void> {
  const stop = () => void runner.stop().catch(() => {});
  if (deps.stopping?.aborted) stop();
  else deps.stopping?.addEventListener("abort", stop, { once: true });
  const idle = idleSince ? watchIdle(deps, utils, idleSince, stop) : null;
  try {
    await runner.promise;
  } finally {
    idle?.cancel();
  }
}

/** Why a job's run does not count as done (it is tried again), or null. */
function whyUnfinished(result: TargetsResult): string | null {
  if (result.cancelled) return "stopped by a signal before it was done; it goes back to the queue";
  if (result.unreachable) return `${result.unreachable}; tried again later`;
  if (result.locked.length > 0) return `another run is writing ${result.locked.join(", ")}; tried again later`;
  const failed = [...result.streams.values()].reduce((n, c) => n + c.failed, 0);
  if (failed > 0) return `${failed} window(s) failed (see sync_windows); tried again later`;
  return null;
}

/** Stops the worker once nothing is queued, running or waiting for recovery. */
function watchIdle(deps: EngineDeps, utils: WorkerUtils, since: Date, stop: () => void): { cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const check = async () => {
    if (cancelled) return;
    const state = await readIdle(utils, queueSchema(deps.config), since).catch(() => null);
    if (state && state.pending === 0) {
      deps.logger.info(
        `worker: nothing left in the queue${state.failedForGood > 0 ? `; ${state.failedForGood} job(s) failed for good` : ""}`,
      );
      stop();
      return;
    }
    timer = setTimeout(check, 1_000);
  };
  timer = setTimeout(check, 1_000);
  return {
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}
