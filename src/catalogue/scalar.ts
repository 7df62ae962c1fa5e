// The 11 scalar operations: a bare text/plain number (`5`, `93.07`, or a quoted `"66.0"`).
import { scalarEnvelope } from "../schemas/project.ts";
import { defineOperation } from "./types.ts";

export const SCALAR_METRICS = [
  "act_agent",
  "inact_agent",
  "host",
  "cpucore",
  "txcount",
  "tps",
  "user",
  "actx",
  "rtime",
  "cpu",
  "apdex",
] as const;
export type ScalarMetric = (typeof SCALAR_METRICS)[number];

export const scalarOperations = SCALAR_METRICS.map((metric) =>
  defineOperation({
    id: `scalar.${metric}`,
    summary: `scalar ${metric}`,
    area: "scalar",
    method: "GET",
    path: `/open/api/${metric}`,
    token: "project",
    sendsPcode: true,
    format: "text",
    windowLimitMs: null,
    inSpec: true,
    // No `records`: the body is one record {metric, value, extra}.
    envelope: scalarEnvelope(metric),
    stream: { kind: "snapshot", table: "scalar_values", enabledByDefault: true, constants: { metric } },
  }),
);
