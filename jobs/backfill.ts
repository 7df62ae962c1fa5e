// `apm-sync backfill --from T --to T [--dry-run]`: fills a range; idempotent and resumable.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { planTarget } from "../src/engine/plan-target.ts";
import { runJob } from "../src/engine/run.ts";
import { nounFor, plural, printRunEnd, printSummary, runEnd } from "../src/engine/summary.ts";
import { backfillOperations, backfillTargets, leftOutNote } from "../src/engine/targets.ts";
import type { EngineDeps } from "../src/engine/types.ts";
import type { Output } from "../src/util/logger.ts";
import { parseBackfillRange, selectionFlags } from "./args.ts";

type BackfillMode = { readonly kind: "backfill"; readonly from: number; readonly to: number };

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  let mode: BackfillMode = { kind: "backfill", from: 0, to: 0 };
  const validate = (config: Config) => {
    flags.validate(config);
    mode = { kind: "backfill", ...parseBackfillRange(opts, config, flags.selection.streams, Date.now()) };
  };
  const metrics = opts.dryRun ? undefined : { command: "backfill", push: true };
  return withApp({ global, progress: !opts.dryRun, graceful: !opts.dryRun, validate, metrics }, async ({ deps, out }) => {
    const { streams, projects } = flags.selection;
    if (opts.dryRun) return dryRun(deps, out, mode, streams, projects);
    const args = { from: new Date(mode.from).toISOString(), to: new Date(mode.to).toISOString(), streams, projects };
    const result = await runJob(deps, { command: "backfill", mode, streams, projects, args });
    deps.progress?.stop();
    printSummary(out, result.streams);
    printRunEnd(out, result.runId, runEnd(result), "re-run the same backfill to retry them");
    return result.exitCode;
  });
}

async function dryRun(
  deps: EngineDeps,
  out: Output,
  mode: BackfillMode,
  streams: string[] | null,
  projects: number[] | null,
): Promise<number> {
  let total = 0;
  for (const target of backfillTargets(deps.config, streams, projects, mode)) {
    const { windows } = await planTarget(deps, target, mode);
    total += windows.length;
    const from = windows[0]?.start;
    const to = windows[windows.length - 1]?.end;
    const span =
      from !== undefined && to !== undefined ? `${new Date(from).toISOString()} .. ${new Date(to).toISOString()}` : "nothing to do";
    const name = target.partition ? `${target.op.id} [${target.partition}]` : target.op.id;
    const record = {
      msg: "planned",
      stream: target.op.id,
      pcode: target.pcode,
      partition: target.partition,
      windows: windows.length,
      from,
      to,
    };
    out.print(
      `${String(target.pcode).padEnd(12)} ${name.padEnd(32)} ${String(windows.length).padStart(6)} ${nounFor(windows.length, "window").padEnd(7)}  ${span}`,
      record,
    );
  }
  const note = leftOutNote(backfillOperations(deps.config, streams, mode).leftOut);
  if (note) out.print(note, { msg: note });
  out.print(`dry run: ${plural(total, "window")} = ${plural(total, "request")} before splits; nothing was sent`, {
    msg: "dry run: nothing was sent",
    windows: total,
    requests: total,
  });
  return 0;
}
