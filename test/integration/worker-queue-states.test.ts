// The queue's jobs by state, as `worker --until-idle` (readIdle), `status` (readQueueStatus) and the
// queue gauges (countQueueJobs) read them: the same state for every job in all three. graphile-worker
// counts an attempt when it locks a job, so a locked job on its last attempt is running, not failed
// for good; jobs of other tasks sharing the queue are not ours.
import { makeWorkerUtils, runMigrations, type WorkerUtils } from "graphile-worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countQueueJobs } from "../../src/metrics/reads/countQueueJobs.ts";
import { MAX_ATTEMPTS } from "../../src/queue/enqueue.ts";
import { readIdle, readQueueStatus } from "../../src/queue/read-queue.ts";
import { TASK } from "../../src/queue/spec.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const SCHEMA = "apm_queue";

describe("the queue's job states", () => {
  let t: TestDatabase;
  let utils: WorkerUtils;
  beforeAll(async () => {
    t = await createTestDatabase();
    await runMigrations({ connectionString: t.url, schema: SCHEMA });
    utils = await makeWorkerUtils({ connectionString: t.url, schema: SCHEMA });
    /** Adds a job `key` of `task`, then gives it `attempts`, a lock and an error as a worker would have. */
    const job = async (key: string, attempts: number, lockedBy: string | null, task: string = TASK.chunk) => {
      const added = await utils.addJob(task, {}, { jobKey: key, maxAttempts: MAX_ATTEMPTS });
      await t.sql`UPDATE ${t.sql(SCHEMA)}._private_jobs SET attempts = ${attempts}, locked_by = ${lockedBy},
        locked_at = ${lockedBy === null ? null : new Date()}, last_error = ${attempts > 0 ? `error of ${key}` : null}, updated_at = now()
        WHERE id = ${added.id}`;
    };
    await job("queued", 0, null);
    await job("retrying", 2, null);
    await job("running", 2, "worker-a");
    await job("running-last-attempt", MAX_ATTEMPTS, "worker-b");
    await job("failed", MAX_ATTEMPTS, null);
    await job("not-ours", MAX_ATTEMPTS, null, "another-app.task");
  });
  afterAll(async () => {
    await utils?.release();
    await t?.drop();
  });

  it("are the same for the idle check, status and the gauges", async () => {
    expect(await countQueueJobs(t.sql, SCHEMA)).toEqual({ queued: 1, running: 2, retrying: 1, failed: 1 });
    expect(await readIdle(utils, SCHEMA, new Date(0))).toEqual({ pending: 4, failedForGood: 1 });
    // Failed for good before `since`: not this worker's to report.
    expect(await readIdle(utils, SCHEMA, new Date(Date.now() + 60_000))).toEqual({ pending: 4, failedForGood: 0 });
    const status = await readQueueStatus(t.sql, SCHEMA, 60_000);
    expect({ ...status, running: status?.running.map((r) => [r.workerId, r.job]) }).toEqual({
      schema: SCHEMA,
      queued: 1,
      retrying: 1,
      running: [
        ["worker-a", "running"],
        ["worker-b", "running-last-attempt"],
      ],
      failedForGood: [{ job: "failed", attempts: MAX_ATTEMPTS, lastError: "error of failed" }],
      workers: [],
    });
  });
});
