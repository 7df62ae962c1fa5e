// v2 aggregated statistics: one operation per type, capped at open_api_max_records (default 10,000).

import { recordOf } from "../kernel/declare.ts";
import { statRequest, statsEnvelope } from "../schemas/stats.ts";
import { statErrorColumns, statHttpcColumns, statRemoteColumns, statSqlColumns, statTransactionColumns } from "./dictionary/stats.ts";
import { DAY, defineOperation } from "./types.ts";

export const STAT_TYPES = ["transaction", "sql", "httpc", "error", "remote"] as const;
export type StatType = (typeof STAT_TYPES)[number];

/** Default sort column per type when `order` is omitted (spec rule 1). */
export const STAT_DEFAULT_ORDER: Record<StatType, string> = {
  transaction: "timeSum",
  sql: "timeAvg",
  httpc: "timeSum",
  error: "count",
  remote: "count",
};

/** The columns each type's records fill, declared once with their table and meanings. */
const STAT_COLUMNS = {
  transaction: statTransactionColumns,
  sql: statSqlColumns,
  httpc: statHttpcColumns,
  error: statErrorColumns,
  remote: statRemoteColumns,
} as const;

export const statOperations = STAT_TYPES.map((type) =>
  defineOperation({
    id: `stat.${type}`,
    summary: `aggregated ${type} statistics`,
    area: "stats",
    // Method and path are published nowhere; default from docs/api-notes.md, overridable in config.
    method: "POST",
    path: `/open/api/v2/stat/${type}`,
    body: type === "httpc" ? ["stime", "etime", "order", "filter"] : ["stime", "etime", "order"],
    overridable: true,
    token: "project",
    sendsPcode: true,
    format: "json",
    windowLimitMs: DAY,
    inSpec: true,
    // The body says when the server produced it (spec: `timestamp`, epoch ms).
    clockField: "timestamp",
    envelope: statsEnvelope,
    records: { at: "data", schema: recordOf(STAT_COLUMNS[type]) },
    requestSchema: statRequest(type),
    stream: {
      kind: "aggregate",
      table: `stat_${type}`,
      enabledByDefault: true,
      truncation: "retrievedTotal",
      echoesWindow: true,
      measure: "count",
    },
  }),
);
