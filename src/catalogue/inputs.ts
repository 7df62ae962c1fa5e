// Request inputs a stream needs from the configuration: the path placeholders the engine does not
// fill itself (host/port filters, filter key/value, agent lists). Read by the config (which keys
// `inputs` may hold) and by the engine (one target per configured entry).
import type { OperationDef } from "./types.ts";

// Placeholders the engine fills itself; any other one needs input the run does not have.
const ENGINE_PLACEHOLDERS = new Set(["stime", "etime", "projectCode", "groupKey"]);

/** Names of the inputs `op` needs, in path order; empty for most streams. */
export function requestInputs(op: OperationDef): string[] {
  return [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((p) => !ENGINE_PLACEHOLDERS.has(p));
}
