// The row keys each stream table receives from parseResponse, derived from the column declarations
// the record schemas are built from (snake_case of the API field + `extra`), written out where a
// stream's records are exploded or read apart. The tests check them against the tables and against
// the parsed docs samples, so a field the parser learns is never left without a column.

import { groupColumns, groupProjectColumns, memberColumns, projectColumns } from "../../src/catalogue/account.ts";
import { agentColumns, agentInventoryColumns } from "../../src/catalogue/agents.ts";
import { SETTING_COLUMNS } from "../../src/catalogue/event-settings.ts";
import { eventColumns } from "../../src/catalogue/events.ts";
import { projectDetailColumns, spotColumns } from "../../src/catalogue/project.ts";
import {
  exceptionColumns,
  heapUseColumns,
  httpcColumns,
  httpcFilteredColumns,
  remoteColumns,
  sqlColumns,
  transactionColumns,
} from "../../src/catalogue/range.ts";
import {
  statErrorColumns,
  statHttpcColumns,
  statRemoteColumns,
  statSqlColumns,
  statTransactionColumns,
} from "../../src/catalogue/stats.ts";
import { shapeOf } from "../../src/kernel/declare.ts";
import { outputKeys } from "../../src/kernel/record.ts";

/** Output keys of the records of each stream table, `extra` last. */
export const STREAM_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  // apiToken is validated, never stored: it has no column and no output key.
  projects: outputKeys(shapeOf(projectColumns)),
  project_members: outputKeys(shapeOf(memberColumns)),
  groups: outputKeys(shapeOf(groupColumns)),
  group_members: outputKeys(shapeOf(memberColumns)),
  group_projects: outputKeys(shapeOf(groupProjectColumns)),
  // projectCode (kept in extra as project_code) and values are read apart from the declaration.
  project_details: ["project_code", ...outputKeys(shapeOf(projectDetailColumns)).slice(0, -1), "values", "extra"],
  agents: outputKeys(shapeOf(agentColumns)),
  agent_inventory: outputKeys(shapeOf(agentInventoryColumns)),
  event_settings: SETTING_COLUMNS,
  // The records' own pcode, read and then replaced by the project asked for (shared column).
  events: ["pcode", ...outputKeys(shapeOf(eventColumns))],
  spot_values: ["pcode", ...outputKeys(shapeOf(spotColumns))],
  scalar_values: ["metric", "value", "extra"],
  range_exceptions: outputKeys(shapeOf(exceptionColumns)),
  range_httpc: outputKeys(shapeOf(httpcColumns)),
  range_httpc_by_service: outputKeys(shapeOf(httpcFilteredColumns)),
  range_sql: outputKeys(shapeOf(sqlColumns)),
  range_remote: outputKeys(shapeOf(remoteColumns)),
  range_transactions: outputKeys(shapeOf(transactionColumns)),
  heap_use: [...outputKeys(shapeOf(heapUseColumns)).slice(0, -1), "time_merge", "unit", "extra"],
  // Averaged series: oid and oname are null (the writer maps oid to its documented sentinel).
  metric_points: ["metric", "oid", "oname", "ts", "value", "extra"],
  visitors: ["granularity", "ts", "count", "extra"],
  visitors_monthly: ["month_start", "month_end", "sdate", "edate", "mau", "extra"],
  // tx_caller/tx_domain filtered: undocumented response, kept whole.
  tx_calls: ["metric_type", "payload", "extra"],
  stat_transaction: outputKeys(shapeOf(statTransactionColumns)),
  stat_sql: outputKeys(shapeOf(statSqlColumns)),
  stat_httpc: outputKeys(shapeOf(statHttpcColumns)),
  stat_error: outputKeys(shapeOf(statErrorColumns)),
  stat_remote: outputKeys(shapeOf(statRemoteColumns)),
};
