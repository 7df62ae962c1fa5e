// `apm-sync backfill --from T --to T [--refetch] [--dry-run]`: fills a range; idempotent and
// resumable. The grain windows the ledger has complete are left out (an interrupted backfill run
// again fetches only the rest) and counted; --refetch fetches them too (their rows are replaced).
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { planTarget } from "../src/engine/plan-target.ts";
import { runJob } from "../src/engine/run.ts";
import { nounFor, plural, printRunEnd, printSummary, runEnd } from "../src/engine/summary.ts";
import { backfillOperations, backfillTargets, leftOutNote } from "../src/engine/targets.ts";
import type { EngineDeps } from "../src/engine/types.ts";
import type { Output } from "../src/util/logger.ts";
import { allProblems, parseBackfillRange, selectionFlags } from "./args.ts";

type BackfillMode = { readonly kind: "backfill"; readonly from: number; readonly to: number; readonly onlyMissing: boolean };

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  let mode: BackfillMode = { kind: "backfill", from: 0, to: 0, onlyMissing: true };
  const validate = (config: Config) =>
    allProblems(
      () => flags.validate(config),
      () => {
        const range = parseBackfillRange(opts, config, flags.selection.streams, Date.now());
        mode = { kind: "backfill", ...range, onlyMissing: opts.refetch !== true };
      },
    );
  const metrics = opts.dryRun ? undefined : { command: "backfill", push: true };
  const sends = !opts.dryRun;
  return withApp({ global, progress: sends, graceful: sends, validate, metrics, trace: sends }, async ({ deps, out }) => {
    const { streams, projects } = flags.selection;
    if (opts.dryRun) return dryRun(deps, out, mode, streams, projects);
    const args = { from: iso(mode.from), to: iso(mode.to), streams, projects, ...(mode.onlyMissing ? {} : { refetch: true }) };
    const result = await runJob(deps, { command: "backfill", mode, streams, projects, args });
    deps.progress?.stop();
    printSummary(out, result.streams);
    if (mode.onlyMissing) printComplete(out, result.complete, "skipped");
    printRunEnd(out, result.runId, runEnd(result), "re-run the same backfill to retry them");
    return result.exitCode;
  });
}

/** `12 windows the ledger has complete were skipped (--refetch fetches them again)`. */
function printComplete(out: Output, complete: number, verb: "skipped" | "would skip"): void {
  const were = verb === "skipped" ? (complete === 1 ? "was skipped" : "were skipped") : "are skipped";
  out.print(`${plural(complete, "window")} the ledger has complete ${were} (--refetch fetches them again)`, {
    msg: "complete windows skipped",
    complete,
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
  let complete = 0;
  for (const target of backfillTargets(deps.config, streams, projects, mode)) {
    const plan = await planTarget(deps, target, mode);
    const { count, from, to } = plan;
    total += count;
    complete += plan.complete;
    const span = from !== null && to !== null ? `${iso(from)} .. ${iso(to)}` : "nothing to do";
    const skipped = plan.complete > 0 ? `  (${plan.complete} complete, skipped)` : "";
    const name = target.partition ? `${target.op.id} [${target.partition}]` : target.op.id;
    const record = {
      msg: "planned",
      stream: target.op.id,
      pcode: target.pcode,
      partition: target.partition,
      windows: count,
      complete: plan.complete,
      from: from ?? undefined,
      to: to ?? undefined,
    };
    out.print(
      `${String(target.pcode).padEnd(12)} ${name.padEnd(32)} ${String(count).padStart(6)} ${nounFor(count, "window").padEnd(7)}  ${span}${skipped}`,
      record,
    );
  }
  const note = leftOutNote(backfillOperations(deps.config, streams, mode).leftOut);
  if (note) out.print(note, { msg: note });
  if (mode.onlyMissing) printComplete(out, complete, "would skip");
  out.print(`dry run: ${plural(total, "window")} = ${plural(total, "request")} before splits; nothing was sent`, {
    msg: "dry run: nothing was sent",
    windows: total,
    requests: total,
    complete,
  });
  return 0;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
