// What a request covers: the account streams and the project targets (every selected stream of
// every selected project, per configured input), decided before anything is fetched.
import { operation } from "../catalogue/index.ts";
import { isAccountStream, type OperationDef } from "../catalogue/types.ts";
import { backfillOperations, leftOutNote, projectTargetsOf, selectOperations, selectProjects } from "./targets.ts";
import type { EngineDeps, JobRequest, Target } from "./types.ts";

export interface Work {
  readonly account: OperationDef[];
  readonly projects: number[];
  readonly project: Target[];
}

export function selectWork(deps: EngineDeps, req: JobRequest): Work {
  const { config } = deps;
  const inputs = config.sync.inputs;
  const parts = req.parts ?? { account: true, projects: true };
  // Backfill fills time ranges: only windowed streams have one (coarse ones only when named).
  const chosen =
    req.mode.kind === "backfill"
      ? backfillOperations(config, req.streams ?? null, req.mode)
      : { ops: selectOperations(req.streams ?? config.sync.streams, inputs), leftOut: [] };
  const leftOut = leftOutNote(chosen.leftOut);
  if (leftOut) deps.logger.info({ streams: chosen.leftOut.map((op) => op.id) }, leftOut);
  const projects = parts.projects ? selectProjects(config, req.projects) : [];
  const ofPartition = (t: Target) => req.partition === undefined || req.partition === null || t.partition === req.partition;
  return {
    account: parts.account ? withParentLists(deps, chosen.ops.filter(isAccountStream)) : [],
    projects,
    project: projectTargetsOf(config, chosen.ops, projects).filter(ofPartition),
  };
}

/**
 * A child stream (members of each project or group) fans out over its parent's list: selected
 * alone, the list is fetched too. One request keeps the child exact (keys stored by an older run
 * miss the projects and groups added since) and makes a first run the same as any other.
 */
function withParentLists(deps: EngineDeps, ops: readonly OperationDef[]): OperationDef[] {
  const children = new Map<string, string[]>();
  for (const op of ops) {
    const parent = op.stream!.parent?.stream;
    if (parent && !ops.some((o) => o.id === parent)) children.set(parent, [...(children.get(parent) ?? []), op.id]);
  }
  for (const [list, ids] of children)
    deps.logger.info({ stream: list, for: ids }, `${ids.join(", ")} fan out over the list of ${list}: it is fetched too (one request)`);
  return [...[...children.keys()].map(operation), ...ops];
}
