// The `restate` hostile mode: the server revised what it holds since it last answered (late data
// counted into an hour, an agent that went down, a threshold someone edited), so the same request
// gets a different answer. Told on the first record of the answer, whatever the operation.
import type { OperationDef } from "../catalogue/types.ts";
import { COUNT_FIELD } from "./keys.ts";

type Json = Record<string, unknown>;

/** Revises `first` (the answer's first record) in place. */
export function restate(first: Json, op: OperationDef): void {
  // Statistics and range records: one more call counted.
  const count = COUNT_FIELD[op.id];
  if (count !== undefined && first[count] != null)
    first[count] = typeof first[count] === "string" ? String(Number(first[count]) + 1) : Number(first[count]) + 1;
  // The agent list: the first agent went inactive.
  if (op.id === "project.agents") first.active = false;
  // Event settings: the first BASIC setting's warning threshold was raised by 10.
  const basic = ((first.events as Json[] | undefined)?.[0]?.BASIC as Json[] | undefined)?.[0];
  if (basic && typeof basic.warningThreshold === "string")
    basic.warningThreshold = basic.warningThreshold.replace(/\d+$/, (n) => String(Number(n) + 10));
}
