// `apm-sync reset --streams a,b [--projects 1,2] [--from T --to T] [--drop-rows] [--dry-run]`:
// forgets windows in the ledger (and moves the watermark back to the first of them), so that the
// next sync or backfill fetches them again; --drop-rows also deletes their rows. Prints what it
// forgot. Exit 1 when another run held a stream's lock (that slice is untouched; run it again).
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { type ResetRequest, resetOperations, resetStreams, type SliceReset } from "../src/engine/reset.ts";
import { UsageError } from "../src/usage-error.ts";
import { allProblems, parseList, parseProjects, parseTimeFlag } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const req: { -readonly [K in keyof ResetRequest]: ResetRequest[K] } = {
    streams: [],
    projects: null,
    from: null,
    to: null,
    dropRows: opts.dropRows === true,
    dryRun: opts.dryRun === true,
  };
  const validate = (config: Config) =>
    allProblems(
      () => {
        req.streams = parseList(opts.streams) ?? [];
        if (req.streams.length === 0) throw new UsageError("--streams: name the streams to reset (see `apm-sync streams`)");
        resetOperations(config, req);
      },
      () => {
        req.projects = parseProjects(opts.projects);
      },
      () => {
        req.from = opts.from === undefined ? null : parseTimeFlag(opts.from, "--from", Date.now());
      },
      () => {
        req.to = opts.to === undefined ? null : parseTimeFlag(opts.to, "--to", Date.now());
      },
      () => {
        if (req.from !== null && req.to !== null && req.to <= req.from) throw new UsageError("--to must be after --from");
      },
    );
  return withApp({ global, needsApi: false, validate }, async ({ deps }) => {
    const slices = await resetStreams(deps, req);
    for (const slice of slices) process.stdout.write(`${describeSlice(slice, req.dryRun)}\n`);
    const windows = slices.reduce((n, s) => n + s.windows.length, 0);
    const locked = slices.filter((s) => s.locked);
    const verb = req.dryRun ? "would forget" : "forgot";
    process.stdout.write(
      `reset${req.dryRun ? " (dry run: nothing changed)" : ""}: ${verb} ${windows} window(s) of ${slices.length - locked.length} stream slice(s)` +
        (slices.length === 0 ? "; the warehouse holds nothing of these streams and projects" : "") +
        (locked.length > 0 ? `; ${locked.length} skipped (another run is writing them; run reset again)` : "") +
        (windows > 0 && !req.dryRun ? "; the next sync or backfill fetches them again" : "") +
        "\n",
    );
    return locked.length > 0 ? 1 : 0;
  });
}

function describeSlice(s: SliceReset, dryRun: boolean): string {
  const name = `${s.stream} pcode=${s.pcode}${s.partition && s.partition !== String(s.pcode) ? ` [${s.partition}]` : ""}`;
  if (s.locked) return `${name}: skipped: another run is writing this stream now`;
  if (s.windows.length === 0) return `${name}: no window in the range`;
  const count = (status: string) => s.windows.filter((w) => w.status === status).length;
  const statuses = ["done", "truncated", "failed", "pruned"].filter((st) => count(st) > 0).map((st) => `${count(st)} ${st}`);
  const span = `${iso(Math.min(...s.windows.map((w) => w.start)))} .. ${iso(Math.max(...s.windows.map((w) => w.end)))}`;
  const mark =
    s.watermark.before === s.watermark.after ? "watermark unchanged" : `watermark ${iso(s.watermark.before)} -> ${iso(s.watermark.after)}`;
  const rows = s.rowsDropped === null ? "" : `; ${s.rowsDropped} row(s) ${dryRun ? "would be deleted" : "deleted"}`;
  return `${name}: ${dryRun ? "would forget" : "forgot"} ${s.windows.length} window(s) ${span} (${statuses.join(", ")}); ${mark}${rows}`;
}

function iso(ms: number | null): string {
  return ms === null ? "none" : new Date(ms).toISOString();
}
