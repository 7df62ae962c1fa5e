// Flag parsing shared by the jobs (comma lists, times, durations). A bad value is a usage error (exit 2).
import { type Config, LONG_MAX, readDuration, readTime } from "../src/config.ts";
import { backfillOperations, requireAccountToken, selectOperations, selectProjects } from "../src/engine/targets.ts";
import { UsageError } from "../src/usage-error.ts";
import { retentionProblem } from "../src/warehouse/retention.ts";

export function parseList(value: unknown): string[] | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function parseProjects(value: unknown): number[] | null {
  const list = parseList(value);
  if (!list) return null;
  const bad = list.filter((p) => !/^\d+$/.test(p));
  if (bad.length > 0) throw new UsageError(`--projects: not project codes: ${bad.join(", ")}`);
  return list.map(Number);
}

/** A time in the forms APM_START takes (ISO, a duration ago like 2d, now), within its bounds. */
export function parseTimeFlag(value: unknown, flag: string, now: number): number {
  const read = readTime(String(value ?? ""), now);
  if ("problem" in read) throw new UsageError(`${flag}: ${read.problem}`);
  return read.ms;
}

/**
 * Runs every check and throws one usage error naming every problem they found (each once), not
 * only the first: a user fixing a command line learns of all its mistakes at one try.
 */
export function allProblems(...checks: (() => void)[]): void {
  const problems = new Set<string>();
  for (const check of checks) {
    try {
      check();
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      problems.add(e.message);
    }
  }
  if (problems.size > 0) throw new UsageError([...problems].join("; "));
}

/** `--from` and `--to` of a backfill: both required, `--to` after `--from`. */
export function parseRange(opts: Record<string, unknown>, now: number): { from: number; to: number } {
  let from = 0;
  let to = 0;
  allProblems(
    () => {
      from = parseTimeFlag(opts.from, "--from", now);
    },
    () => {
      to = parseTimeFlag(opts.to, "--to", now);
    },
  );
  if (to <= from) throw new UsageError(`--to must be after --from (got ${new Date(from).toISOString()} .. ${new Date(to).toISOString()})`);
  return { from, to };
}

/** `--from`/`--to` of a backfill of `streams`, refused when it reaches before their retention (pruned time). */
export function parseBackfillRange(opts: Record<string, unknown>, config: Config, streams: readonly string[] | null, now: number) {
  const range = parseRange(opts, now);
  const ids = backfillOperations(config, streams, range).ops.map((op) => op.id);
  const problem = retentionProblem(config.retention, ids, range.from, now);
  if (problem) throw new UsageError(problem);
  return range;
}

/** `--chunk 1d`: whole 5-minute steps (the API's grid), at most about ten years (no range is longer: times start in 2000). */
export function parseChunk(value: unknown): number {
  const read = readDuration(String(value ?? ""), { min: 0, max: LONG_MAX, grid: true });
  if ("problem" in read) throw new UsageError(`--chunk: ${read.problem}`);
  return read.ms;
}

/**
 * `--streams` / `--projects` of sync, backfill and check; `validate` checks them against the config
 * (exit 2). `runsAccount`: the command runs the account streams (sync), which need the account token.
 */
export function selectionFlags(opts: Record<string, unknown>, runsAccount = false) {
  const selection: { streams: string[] | null; projects: number[] | null } = { streams: parseList(opts.streams), projects: null };
  const validate = (config: Config) => {
    selection.projects = parseProjects(opts.projects);
    selectOperations(selection.streams ?? config.sync.streams, config.sync.inputs);
    selectProjects(config, selection.projects);
    if (runsAccount) requireAccountToken(config, selection.streams);
  };
  return { selection, validate };
}
