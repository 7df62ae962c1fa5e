// Which streams and projects a run covers: the selection from config and flags, checked up front
// so that a typo is a usage error (exit 2) before any request.
import { OPERATIONS } from "../catalogue/index.ts";
import type { OperationDef } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Target } from "./types.ts";

/** A usage problem found before anything was requested (exit code 2). */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

// Placeholders the engine fills itself; any other one needs input the run does not have.
const KNOWN_PLACEHOLDERS = new Set(["stime", "etime", "projectCode", "groupKey"]);

function placeholders(op: OperationDef): string[] {
  return [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((p) => !KNOWN_PLACEHOLDERS.has(p));
}

export type StreamInputs = Config["sync"]["inputs"];

/**
 * Resolves stream ids: exact ids, or a prefix (`stat`, `stat.*`, `series.apdex`) that selects every
 * stream under it that is on by default or has configured inputs. Without a selection: every
 * stream enabled by default, plus those with configured inputs.
 */
export function selectOperations(requested: readonly string[] | null | undefined, inputs: StreamInputs = {}): OperationDef[] {
  const streams = OPERATIONS.filter((op) => op.stream);
  const unknownInputs = Object.keys(inputs).filter((id) => !streams.some((op) => op.id === id));
  if (unknownInputs.length > 0) throw new UsageError(`inputs for unknown stream(s): ${unknownInputs.join(", ")}`);
  const configured = (op: OperationDef) => (inputs[op.id]?.length ?? 0) > 0;
  const wanted = (op: OperationDef) => op.stream!.enabledByDefault || configured(op);
  let picked: OperationDef[];
  if (!requested || requested.length === 0) picked = streams.filter(wanted);
  else {
    const set = new Set<OperationDef>();
    const unknown: string[] = [];
    for (const raw of requested) {
      const id = raw.replace(/\.\*$/, "");
      const exact = streams.find((op) => op.id === id);
      const matches = exact ? [exact] : streams.filter((op) => op.id.startsWith(`${id}.`) && wanted(op));
      if (matches.length === 0) unknown.push(raw);
      for (const op of matches) set.add(op);
    }
    if (unknown.length > 0) throw new UsageError(`unknown stream(s): ${unknown.join(", ")} (see \`apm-sync streams\`)`);
    picked = streams.filter((op) => set.has(op));
  }
  const problems = picked.flatMap((op) => inputProblems(op, inputs[op.id]));
  if (problems.length > 0) throw new UsageError(problems.join("; "));
  return picked;
}

/** What is wrong with the inputs of a stream that needs some (empty when nothing is). */
function inputProblems(op: OperationDef, entries: StreamInputs[string] | undefined): string[] {
  const needed = placeholders(op);
  if (needed.length === 0) return [];
  const list = needed.map((p) => `{${p}}`).join(", ");
  if (!entries || entries.length === 0) return [`stream ${op.id} needs ${list}: list them under "inputs" in the config file`];
  return entries.flatMap((entry, i) => {
    const missing = needed.filter((p) => entry[p] === undefined || entry[p] === "");
    return missing.length > 0 ? [`inputs of ${op.id}, entry ${i + 1}: missing ${missing.join(", ")}`] : [];
  });
}

/** One target per configured input of the stream (a single one when it needs none). */
export function projectTargets(op: OperationDef, pcode: number, inputs: StreamInputs = {}): Target[] {
  if (placeholders(op).length === 0) return [projectTarget(op, pcode)];
  return (inputs[op.id] ?? []).map((entry) => ({ op, stream: op.stream!, pcode, partition: partitionOf(entry), params: { ...entry } }));
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

/** Account-level operations: no project code header. */
export function isAccountOperation(op: OperationDef): boolean {
  return !op.sendsPcode;
}

export function projectTarget(op: OperationDef, pcode: number): Target {
  return { op, stream: op.stream!, pcode, partition: "", params: {} };
}

export function accountTarget(op: OperationDef, partition = ""): Target {
  const params =
    op.stream?.fanOut === "project" ? { projectCode: Number(partition) } : op.stream?.fanOut === "group" ? { groupKey: partition } : {};
  return { op, stream: op.stream!, pcode: 0, partition, params };
}

/** The project targets a backfill covers: every selected windowed stream of every selected project. */
export function backfillTargets(config: Config, streams: readonly string[] | null, projects: readonly number[] | null): Target[] {
  const inputs = config.sync.inputs;
  const ops = selectOperations(streams ?? config.sync.streams, inputs).filter((op) => op.windowLimitMs !== null && op.sendsPcode);
  return selectProjects(config, projects).flatMap((pcode) => ops.flatMap((op) => projectTargets(op, pcode, inputs)));
}
