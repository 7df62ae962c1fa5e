import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { type ChunkJob, chunkRange, jobKey, parseChunkJob, queueName, requestOf } from "../../src/queue/spec.ts";

const H = 3_600_000;
const D = 24 * H;
const T = Date.UTC(2026, 0, 10);

describe("chunkRange", () => {
  it("cuts a range into day chunks on grain boundaries, clipped to the range widened to whole grains", () => {
    expect(chunkRange(T + 90 * 60_000, T + 2 * D + 30 * 60_000, D, H)).toEqual([
      { from: T + H, to: T + D },
      { from: T + D, to: T + 2 * D },
      { from: T + 2 * D, to: T + 2 * D + H },
    ]);
  });
  it("never splits a grain window between two chunks (a 7-day grain makes 7-day chunks)", () => {
    const chunks = chunkRange(T, T + 20 * D, D, 7 * D);
    for (const c of chunks) expect([c.from % (7 * D), c.to % (7 * D)]).toEqual([0, 0]);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.from).toBe(chunks[i - 1]!.to);
  });
  it("covers the range exactly once", () => {
    const chunks = chunkRange(T, T + 3 * D, 6 * H, H);
    expect(chunks).toHaveLength(12);
    expect(chunks[0]!.from).toBe(T);
    expect(chunks.at(-1)!.to).toBe(T + 3 * D);
  });
});

describe("queued jobs", () => {
  const chunk: ChunkJob = { kind: "backfill", stream: "stat.sql", pcode: 7, partition: "", from: T, to: T + D };
  it("keys identify the work: same chunk, same key; another chunk or partition, another key", () => {
    expect(jobKey(chunk)).toBe(jobKey({ ...chunk }));
    expect(jobKey(chunk)).not.toBe(jobKey({ ...chunk, from: T + D, to: T + 2 * D }));
    expect(jobKey(chunk)).not.toBe(jobKey({ ...chunk, partition: "host=a&port=1" }));
    expect(jobKey({ kind: "sync", stream: "stat.sql", pcode: 7, partition: "" })).toBe("sync:stat.sql:7:");
  });
  it("one named queue per stream of a project, whatever the chunk", () => {
    expect(queueName(chunk)).toBe(queueName({ ...chunk, from: T + D, to: T + 2 * D }));
    expect(queueName(chunk)).not.toBe(queueName({ ...chunk, pcode: 8 }));
  });
  it("a job runs the engine on its stream, project, partition and range only", () => {
    expect(requestOf(chunk)).toEqual({
      command: "backfill",
      mode: { kind: "backfill", from: T, to: T + D, onlyMissing: true },
      streams: ["stat.sql"],
      projects: [7],
      partition: "",
      parts: { account: false, projects: true },
    });
    // Queued with --refetch: the windows the ledger has complete are fetched too.
    expect(requestOf({ ...chunk, refetch: true }).mode).toEqual({ kind: "backfill", from: T, to: T + D, onlyMissing: false });
    expect(requestOf({ kind: "sync-account" }).parts).toEqual({ account: true, projects: false });
  });
  it("a payload that is not a job is refused with the reason", () => {
    expect(parseChunkJob(chunk)).toEqual(chunk);
    expect(() => parseChunkJob({ kind: "backfill", stream: "stat.sql" })).toThrow(/pcode/);
  });
});

describe("queue configuration", () => {
  const env = { APM_BASE_URL: "http://x.invalid" };
  it("defaults: recovery 5 minutes, no schedule", () => {
    expect(loadConfig({ env }).queue).toEqual({ recoveryMs: 5 * 60_000, schedule: null });
  });
  it("reads APM_WORKER_RECOVERY and APM_SCHEDULE, and refuses a schedule that is not five cron fields", () => {
    expect(loadConfig({ env: { ...env, APM_WORKER_RECOVERY: "30s", APM_SCHEDULE: "*/10 * * * *" } }).queue).toEqual({
      recoveryMs: 30_000,
      schedule: "*/10 * * * *",
    });
    expect(() => loadConfig({ env: { ...env, APM_SCHEDULE: "every 10 minutes" } })).toThrow(/APM_SCHEDULE: expected a cron expression/);
  });
});
