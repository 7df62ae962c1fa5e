// Which streams and projects a run covers: the selection from config and flags, checked up front
// so that a typo is a usage error (exit 2) before any request.
import { OPERATIONS } from "../catalogue/index.ts";
import { requestInputs } from "../catalogue/inputs.ts";
import { DAY, isAccountStream, isWindowed, type OperationDef } from "../catalogue/types.ts";
import { streamNameProblem } from "../config/stream-names.ts";
import type { Config } from "../config.ts";
import { UsageError } from "../usage-error.ts";
import { streamGrain } from "../windows/plan.ts";
import type { Target } from "./types.ts";

export type StreamInputs = Config["sync"]["inputs"];

/**
 * Resolves stream ids: exact ids, or a prefix (`stat`, `stat.*`, `series.apdex`) that selects every
 * stream under it that is on by default or has configured inputs. Without a selection: every
 * stream enabled by default, plus those with configured inputs.
 */
export function selectOperations(requested: readonly string[] | null | undefined, inputs: StreamInputs = {}): OperationDef[] {
  const streams = OPERATIONS.filter((op) => op.stream);
  const configured = (op: OperationDef) => (inputs[op.id]?.length ?? 0) > 0;
  const wanted = (op: OperationDef) => op.stream!.enabledByDefault || configured(op);
  let picked: OperationDef[];
  if (!requested || requested.length === 0) picked = streams.filter(wanted);
  else {
    const set = new Set<OperationDef>();
    const problems: string[] = [];
    for (const raw of requested) {
      const id = raw.replace(/\.\*$/, "");
      const exact = streams.find((op) => op.id === id);
      const matches = exact ? [exact] : streams.filter((op) => op.id.startsWith(`${id}.`) && wanted(op));
      if (matches.length === 0)
        problems.push(streamNameProblem(raw) ?? `${raw} selects no stream: the streams under it need inputs; name them one by one`);
      for (const op of matches) set.add(op);
    }
    if (problems.length > 0) throw new UsageError(problems.join("; "));
    picked = streams.filter((op) => set.has(op));
  }
  const problems = picked.flatMap((op) => inputProblems(op, inputs[op.id]));
  if (problems.length > 0) throw new UsageError(problems.join("; "));
  return picked;
}

/** A stream that needs inputs, selected without any (their keys are checked with the config). */
function inputProblems(op: OperationDef, entries: StreamInputs[string] | undefined): string[] {
  const needed = requestInputs(op);
  if (needed.length === 0 || (entries?.length ?? 0) > 0) return [];
  return [`stream ${op.id} needs ${needed.map((p) => `{${p}}`).join(", ")}: list them under "inputs" in the config file`];
}

/**
 * Account streams selected by name (`--streams`, or APM_STREAMS / file key `streams`) cannot run
 * without the account token: refused (exit 2) rather than a run that ends "complete" with nothing.
 */
export function requireAccountToken(config: Config, flag: readonly string[] | null): void {
  const requested = flag ?? config.sync.streams;
  if (config.api.accountToken || !requested) return;
  const ids = selectOperations(requested, config.sync.inputs)
    .filter(isAccountStream)
    .map((op) => op.id);
  if (ids.length === 0) return;
  const where = flag ? "--streams" : "APM_STREAMS (file key streams)";
  throw new UsageError(
    `${where} selects account streams (${ids.join(", ")}) but APM_ACCOUNT_TOKEN is not set: set it (or APM_ACCOUNT_TOKEN_FILE), or leave them out`,
  );
}

/** One target per configured input of the stream (a single one when it needs none). */
export function projectTargets(op: OperationDef, pcode: number, inputs: StreamInputs = {}): Target[] {
  if (requestInputs(op).length === 0) return [projectTarget(op, pcode)];
  return (inputs[op.id] ?? []).map((entry) => ({ op, stream: op.stream!, pcode, partition: partitionOf(entry), params: { ...entry } }));
}

/** Every target of `ops` (project streams; account streams are left out) for each of `projects`. */
export function projectTargetsOf(config: Config, ops: readonly OperationDef[], projects: readonly number[]): Target[] {
  const projectOps = ops.filter((op) => !isAccountStream(op));
  return projects.flatMap((pcode) => projectOps.flatMap((op) => projectTargets(op, pcode, config.sync.inputs)));
}

/** A stable partition name for an input entry: `host=10.0.0.5&port=8080`. */
export function partitionOf(entry: Readonly<Record<string, string | number | readonly number[]>>): string {
  return Object.keys(entry)
    .sort()
    .map((k) => {
      const v = entry[k]!;
      return `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`;
    })
    .join("&");
}

/** Configured projects, optionally narrowed by --projects (each must have a token). */
export function selectProjects(config: Config, requested: readonly number[] | null | undefined): number[] {
  const configured = config.api.projects.map((p) => p.pcode);
  if (!requested || requested.length === 0) return configured;
  const missing = requested.filter((p) => !configured.includes(p));
  if (missing.length > 0) throw new UsageError(`project(s) ${missing.join(", ")} have no token in the configuration (APM_PROJECTS)`);
  return [...requested];
}

export function projectTarget(op: OperationDef, pcode: number): Target {
  return { op, stream: op.stream!, pcode, partition: "", params: {} };
}

/**
 * The windowed streams a backfill of [from, to) covers. A backfill fetches whole grain windows,
 * so a stream whose grain is longer than a day and than the range (visitors.d: 7 days, visitors.m:
 * 365 days) would fetch far more than was asked: it is left out unless named by its exact id.
 */
export function backfillOperations(
  config: Config,
  requested: readonly string[] | null,
  range: { readonly from: number; readonly to: number },
): { ops: OperationDef[]; leftOut: OperationDef[] } {
  const streams = requested ?? config.sync.streams;
  const windowed = selectOperations(streams, config.sync.inputs).filter((op) => isWindowed(op.stream!));
  const coarse = (op: OperationDef) => {
    const grain = streamGrain(config.sync, op);
    return grain > DAY && grain > range.to - range.from && !streams?.includes(op.id);
  };
  return { ops: windowed.filter((op) => !coarse(op)), leftOut: windowed.filter(coarse) };
}

/** What a backfill says about the streams it left out. */
export function leftOutNote(leftOut: readonly OperationDef[]): string | null {
  if (leftOut.length === 0) return null;
  return `left out of this backfill (their grain is longer than the range; name them in --streams to fetch their whole window): ${leftOut.map((op) => op.id).join(", ")}`;
}

/** The project targets a backfill covers: every selected windowed stream of every selected project. */
export function backfillTargets(
  config: Config,
  streams: readonly string[] | null,
  projects: readonly number[] | null,
  range: { readonly from: number; readonly to: number },
): Target[] {
  return projectTargetsOf(config, backfillOperations(config, streams, range).ops, selectProjects(config, projects));
}
