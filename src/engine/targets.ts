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

/**
 * Resolves stream ids: exact ids, or a prefix (`stat`, `stat.*`, `series.apdex`) that selects every
 * stream under it. Without a selection: every stream enabled by default.
 */
export function selectOperations(requested: readonly string[] | null | undefined): OperationDef[] {
  const streams = OPERATIONS.filter((op) => op.stream);
  if (!requested || requested.length === 0) return streams.filter((op) => op.stream!.enabledByDefault);
  const picked = new Set<OperationDef>();
  const unknown: string[] = [];
  for (const raw of requested) {
    const id = raw.replace(/\.\*$/, "");
    const exact = streams.find((op) => op.id === id);
    const matches = exact ? [exact] : streams.filter((op) => op.id.startsWith(`${id}.`) && op.stream!.enabledByDefault);
    if (matches.length === 0) unknown.push(raw);
    for (const op of matches) picked.add(op);
  }
  if (unknown.length > 0) throw new UsageError(`unknown stream(s): ${unknown.join(", ")} (see \`apm-sync streams\`)`);
  const needInput = [...picked].filter((op) => placeholders(op).length > 0);
  if (needInput.length > 0) {
    throw new UsageError(
      needInput
        .map(
          (op) =>
            `stream ${op.id} needs ${placeholders(op)
              .map((p) => `{${p}}`)
              .join(", ")}, which a run cannot supply yet`,
        )
        .join("; "),
    );
  }
  return streams.filter((op) => picked.has(op));
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
