// `apm-sync enqueue backfill --from T --to T [--chunk 1d] [--refetch]` and `apm-sync enqueue sync`:
// the work as jobs on the queue (run by `apm-sync worker`). Prints how many jobs were added, how
// many were queued already and (backfill) how many chunks the ledger has complete.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { parseDuration } from "../src/config.ts";
import { UsageError } from "../src/engine/targets.ts";
import { type EnqueueResult, enqueueBackfill, enqueueSync } from "../src/queue/enqueue.ts";
import { queueSchema, queueUrl, withQueue } from "../src/queue/queue.ts";
import { parseTime, selectionFlags } from "./args.ts";

export async function runBackfill(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  const range = { from: 0, to: 0, chunkMs: 0 };
  const validate = (config: Config) => {
    queueUrl(config);
    range.from = parseTime(opts.from, "--from");
    range.to = parseTime(opts.to, "--to");
    if (range.to <= range.from) throw new UsageError("--to must be after --from");
    const chunk = parseDuration(String(opts.chunk ?? "1d"));
    if (chunk === null || chunk < 5 * 60_000)
      throw new UsageError(`--chunk: expected a duration of at least 5m, e.g. 1d, got ${String(opts.chunk)}`);
    range.chunkMs = chunk;
    flags.validate(config);
  };
  return withApp({ global, validate }, async ({ deps, config, logger }) => {
    const { streams, projects } = flags.selection;
    const result = await withQueue(config, logger, (utils) =>
      enqueueBackfill(deps, utils, { ...range, streams, projects, refetch: opts.refetch === true }),
    );
    report("backfill", result, config);
    return 0;
  });
}

export async function runSync(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  const validate = (config: Config) => {
    queueUrl(config);
    flags.validate(config);
  };
  return withApp({ global, validate }, async ({ deps, config, logger }) => {
    const { streams, projects } = flags.selection;
    const result = await withQueue(config, logger, (utils) => enqueueSync(deps, utils, streams, projects));
    report("sync", result, config);
    return 0;
  });
}

function report(what: string, r: EnqueueResult, config: Config): void {
  const done = what === "backfill" ? `, ${r.done} chunk(s) complete in the ledger (--refetch queues them anyway)` : "";
  process.stdout.write(
    `enqueue ${what}: ${r.added} job(s) added, ${r.existing} already queued${done}; queue schema ${queueSchema(config)}\n`,
  );
}
