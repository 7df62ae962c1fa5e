// `apm-sync backfill --from T --to T [--dry-run]`: fills a range; idempotent and resumable.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { runJob } from "../src/engine/run.ts";
import { planTarget } from "../src/engine/run-windowed.ts";
import { summaryLines } from "../src/engine/summary.ts";
import { backfillTargets, UsageError } from "../src/engine/targets.ts";
import { parseTime, selectionFlags } from "./args.ts";

type BackfillMode = { readonly kind: "backfill"; readonly from: number; readonly to: number };

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  let mode: BackfillMode = { kind: "backfill", from: 0, to: 0 };
  const validate = (config: Config) => {
    const from = parseTime(opts.from, "--from");
    const to = parseTime(opts.to, "--to");
    if (to <= from) throw new UsageError("--to must be after --from");
    mode = { kind: "backfill", from, to };
    flags.validate(config);
  };
  const metrics = opts.dryRun ? undefined : { command: "backfill", push: true };
  return withApp({ global, progress: !opts.dryRun, graceful: !opts.dryRun, validate, metrics }, async ({ deps }) => {
    const { streams, projects } = flags.selection;
    if (opts.dryRun) return dryRun(deps, mode, streams, projects);
    const result = await runJob(deps, {
      command: "backfill",
      mode,
      streams,
      projects,
      args: { from: opts.from, to: opts.to, streams, projects },
    });
    deps.progress?.stop();
    for (const line of summaryLines(result)) process.stdout.write(`${line}\n`);
    process.stdout.write(
      `run ${result.runId}: ${result.cancelled ? "cancelled (stopped by a signal; the next run fetches the rest)" : result.exitCode === 0 ? "complete" : "some windows failed (re-run the same backfill to retry them)"}\n`,
    );
    return result.exitCode;
  });
}

async function dryRun(
  deps: Parameters<typeof planTarget>[0],
  mode: BackfillMode,
  streams: string[] | null,
  projects: number[] | null,
): Promise<number> {
  let total = 0;
  for (const target of backfillTargets(deps.config, streams, projects)) {
    const { windows } = await planTarget(deps, target, mode);
    total += windows.length;
    const first = windows[0];
    const last = windows[windows.length - 1];
    const span = first && last ? `${new Date(first.start).toISOString()} .. ${new Date(last.end).toISOString()}` : "nothing to do";
    const name = target.partition ? `${target.op.id} [${target.partition}]` : target.op.id;
    process.stdout.write(`${String(target.pcode).padEnd(12)} ${name.padEnd(32)} ${String(windows.length).padStart(6)} windows  ${span}\n`);
  }
  process.stdout.write(`dry run: ${total} windows = ${total} requests before splits; nothing was sent\n`);
  return 0;
}
