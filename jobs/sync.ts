// `apm-sync sync [--streams a,b] [--projects 1,2]`: incremental catch-up up to now - settle.
import { withApp } from "../src/app.ts";
import { runJob } from "../src/engine/run.ts";
import { printRunEnd, printSummary, runEnd } from "../src/engine/summary.ts";
import { pruneAtEnd } from "../src/warehouse/prune-report.ts";
import { selectionFlags } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const { selection, validate } = selectionFlags(opts, true);
  const metrics = { command: "sync", push: true };
  return withApp({ global, progress: true, graceful: true, validate, metrics, trace: true }, async ({ deps, out }) => {
    const { streams, projects } = selection;
    const result = await runJob(deps, { command: "sync", mode: { kind: "sync" }, streams, projects, args: { streams, projects } });
    deps.progress?.stop();
    printSummary(out, result.streams);
    printRunEnd(out, result.runId, runEnd(result), "see `apm-sync status`; the next run retries them");
    if (!deps.stopping?.aborted) await pruneAtEnd(deps, out, Date.now());
    return result.exitCode;
  });
}
