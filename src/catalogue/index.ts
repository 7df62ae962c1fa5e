import { accountOperations } from "./account.ts";
import { agentOperations } from "./agents.ts";
import { callOperations } from "./calls.ts";
import { eventOperations } from "./events.ts";
import { extraOperations } from "./extras.ts";
import { projectOperations, scalarOperations } from "./project.ts";
import { rangeOperations } from "./range.ts";
import { seriesOperations } from "./series.ts";
import { statOperations } from "./stats.ts";
import type { OperationDef } from "./types.ts";
import { visitorOperations } from "./visitors.ts";

/** Every operation the client knows, spec first, then docs-only extras. */
export const OPERATIONS: readonly OperationDef[] = [
  ...accountOperations,
  ...projectOperations,
  ...agentOperations,
  ...eventOperations,
  ...scalarOperations,
  ...rangeOperations,
  ...seriesOperations,
  ...visitorOperations,
  ...callOperations,
  ...statOperations,
  ...extraOperations,
];

const byId = new Map(OPERATIONS.map((op) => [op.id, op]));
if (byId.size !== OPERATIONS.length) throw new Error("duplicate operation id in the catalogue");

export function operation(id: string): OperationDef {
  const op = byId.get(id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}

export type { OperationDef } from "./types.ts";
