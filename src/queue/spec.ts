// What a queued job is: a payload the worker runs with the ordinary engine, a job key that makes
// enqueueing the same work twice add nothing, and a queue name per stream of a project so that
// the jobs of one stream run one after another (the stream's advisory lock would refuse the
// second anyway) while different streams run on all workers at once.
import { z } from "zod";
import type { JobRequest } from "../engine/types.ts";

/** graphile-worker task names. */
export const TASK = { chunk: "apm-sync.chunk", schedule: "apm-sync.schedule" } as const;

const chunkSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("backfill"),
    stream: z.string(),
    pcode: z.number().int().positive(),
    partition: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    // `enqueue backfill --refetch`: fetch the windows the ledger has complete too (absent: skip them).
    refetch: z.boolean().optional(),
  }),
  z.object({ kind: z.literal("sync"), stream: z.string(), pcode: z.number().int().positive(), partition: z.string() }),
  z.object({ kind: z.literal("sync-account") }),
]);

/** The payload of one queued job. */
export type ChunkJob = z.infer<typeof chunkSchema>;

/** Parses a job's payload (a payload from another version fails the job, with the reason). */
export function parseChunkJob(payload: unknown): ChunkJob {
  return chunkSchema.parse(payload);
}

/** Identifies the job: adding a job whose key is queued already adds nothing. */
export function jobKey(job: ChunkJob): string {
  switch (job.kind) {
    case "backfill":
      return `backfill:${job.stream}:${job.pcode}:${job.partition}:${new Date(job.from).toISOString()}:${new Date(job.to).toISOString()}`;
    case "sync":
      return `sync:${job.stream}:${job.pcode}:${job.partition}`;
    case "sync-account":
      return "sync:account";
  }
}

/** Jobs of one stream of one project run in series (one named queue each). */
export function queueName(job: ChunkJob): string {
  return job.kind === "sync-account" ? "apm:account" : `apm:${job.stream}:${job.pcode}:${job.partition}`;
}

/** The engine request that runs a job. */
export function requestOf(job: ChunkJob): JobRequest {
  switch (job.kind) {
    case "backfill":
      return {
        command: "backfill",
        mode: { kind: "backfill", from: job.from, to: job.to, onlyMissing: job.refetch !== true },
        streams: [job.stream],
        projects: [job.pcode],
        partition: job.partition,
        parts: { account: false, projects: true },
      };
    case "sync":
      return {
        command: "sync",
        mode: { kind: "sync" },
        streams: [job.stream],
        projects: [job.pcode],
        partition: job.partition,
        parts: { account: false, projects: true },
      };
    case "sync-account":
      return { command: "sync", mode: { kind: "sync" }, parts: { account: true, projects: false } };
  }
}

/** A short label for logs. */
export function describeJob(job: ChunkJob): string {
  if (job.kind === "sync-account") return "sync of the account streams";
  const part = job.partition ? ` [${job.partition}]` : "";
  const what = `${job.stream} pcode=${job.pcode}${part}`;
  return job.kind === "sync" ? `sync of ${what}` : `${what} ${new Date(job.from).toISOString()}..${new Date(job.to).toISOString()}`;
}

/**
 * Splits [from, to) into chunks of about `chunkMs`, on boundaries that are multiples of the
 * stream's grain (so two chunks never share a grain window), clipped to the range widened to
 * whole grain windows, as the backfill planner widens it.
 */
export function chunkRange(from: number, to: number, chunkMs: number, grainMs: number): { from: number; to: number }[] {
  const unit = Math.max(1, Math.round(chunkMs / grainMs)) * grainMs;
  const start = Math.floor(from / grainMs) * grainMs;
  const end = Math.ceil(to / grainMs) * grainMs;
  const out: { from: number; to: number }[] = [];
  for (let c = Math.floor(start / unit) * unit; c < end; c += unit) out.push({ from: Math.max(c, start), to: Math.min(c + unit, end) });
  return out;
}
