// Request parameters that give every operation of a sandbox data (shared by the tests that call
// every operation).
import type { OperationDef } from "../../src/catalogue/types.ts";
import type { Sandbox } from "../../src/sandbox/index.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A busy daytime hour of the sandbox's world (its clock is set after it). */
export const T = Date.UTC(2025, 0, 14, 14, 0);

/** Request parameters that give every operation data (a busy daytime window within its limit). */
export function paramsFor(op: OperationDef, sb: Sandbox, groupKey: string) {
  const pcode = sb.projects[0]!.pcode;
  const [a, b] = sb.truth.agents(pcode);
  const limit = op.windowLimitMs ?? 0;
  const [stime, etime] =
    op.id === "visitors.m"
      ? [Date.UTC(2024, 8, 1), Date.UTC(2024, 11, 1)]
      : op.id === "visitors.d"
        ? [Date.UTC(2025, 0, 10), Date.UTC(2025, 0, 13)]
        : [T, T + Math.min(limit, op.id === "project.event_history" ? DAY : HOUR)];
  const params = {
    stime,
    etime,
    projectCode: pcode,
    groupKey,
    oids: `${a!.oid},${b!.oid}`,
    host: "127.0.0.1",
    port: 10002,
    filterkey: "caller_pcode",
    filterval: sb.projects[1]!.pcode,
  };
  const body = op.method === "POST" ? { stime, etime } : undefined;
  return { ...(op.sendsPcode && { pcode }), params, ...(body && { body }) };
}
