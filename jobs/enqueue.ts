// `apm-sync enqueue backfill --from T --to T [--chunk 1d] [--refetch]` and `apm-sync enqueue sync`:
// the work as jobs on the queue (run by `apm-sync worker`). Prints how many jobs were added, how
// many were queued already and (backfill) how many chunks the ledger has complete.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { type EnqueueResult, enqueueBackfill, enqueueSync } from "../src/queue/enqueue.ts";
import { queueSchema, queueUrl, withQueue } from "../src/queue/queue.ts";
import type { Output } from "../src/util/logger.ts";
import { allProblems, parseBackfillRange, parseChunk, selectionFlags } from "./args.ts";

export async function runBackfill(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  const range = { from: 0, to: 0, chunkMs: 0 };
  const validate = (config: Config) =>
    allProblems(
      () => queueUrl(config),
      () => flags.validate(config),
      () => Object.assign(range, parseBackfillRange(opts, config, flags.selection.streams, Date.now())),
      () => Object.assign(range, { chunkMs: parseChunk(opts.chunk ?? "1d") }),
    );
  return withApp({ global, validate, queue: true }, async ({ deps, config, logger, out }) => {
    const { streams, projects } = flags.selection;
    const result = await withQueue(config, logger, (utils) =>
      enqueueBackfill(deps, utils, { ...range, streams, projects, refetch: opts.refetch === true }),
    );
    report(out, "backfill", result, config);
    return 0;
  });
}

export async function runSync(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts, true);
  const validate = (config: Config) => {
    queueUrl(config);
    flags.validate(config);
  };
  return withApp({ global, validate, queue: true }, async ({ deps, config, logger, out }) => {
    const { streams, projects } = flags.selection;
    const result = await withQueue(config, logger, (utils) => enqueueSync(deps, utils, streams, projects));
    report(out, "sync", result, config);
    return 0;
  });
}

function report(out: Output, what: string, r: EnqueueResult, config: Config): void {
  const done = what === "backfill" ? `, ${r.done} chunk(s) complete in the ledger (--refetch queues them anyway)` : "";
  out.print(`enqueue ${what}: ${r.added} job(s) added, ${r.existing} already queued${done}; queue schema ${queueSchema(config)}`, {
    msg: `enqueue ${what}`,
    added: r.added,
    existing: r.existing,
    ...(what === "backfill" ? { done: r.done } : {}),
    queueSchema: queueSchema(config),
  });
}
