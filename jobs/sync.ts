// `apm-sync sync [--streams a,b] [--projects 1,2]`: incremental catch-up up to now - settle.
import { withApp } from "../src/app.ts";
import { runJob } from "../src/engine/run.ts";
import { summaryLines } from "../src/engine/summary.ts";
import { selectionFlags } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const { selection, validate } = selectionFlags(opts);
  const metrics = { command: "sync", push: true };
  return withApp({ global, progress: true, graceful: true, validate, metrics }, async ({ deps }) => {
    const { streams, projects } = selection;
    const result = await runJob(deps, { command: "sync", mode: { kind: "sync" }, streams, projects, args: { streams, projects } });
    deps.progress?.stop();
    for (const line of summaryLines(result)) process.stdout.write(`${line}\n`);
    process.stdout.write(
      `run ${result.runId}: ${result.cancelled ? "cancelled (stopped by a signal; the next run fetches the rest)" : result.exitCode === 0 ? "complete" : "some windows failed (see `apm-sync status`; the next run retries them)"}\n`,
    );
    return result.exitCode;
  });
}
