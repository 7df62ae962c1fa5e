// Agents active in a window, spot values and the 11 scalar operations (project token + pcode): each
// table's columns declared once (declare.ts), from which the record schemas (src/schemas/project.ts),
// the tables (src/db/schema/project.ts) and these dictionary entries come. Spec "Agent (active in a
// time window)", "Spot values", "Scalar project operations".
import { text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, docsOf, flag, hash, integerOf, local, named, of, says, text } from "../../kernel/declare.ts";
import { AS_NUMBER, type DocGroup, HASH32, type TableDoc } from "../../kernel/docs.ts";
import { int32, num } from "../../kernel/primitives.ts";
import { opt } from "../../kernel/record.ts";
import { f64, i64, ts } from "../../kernel/sql-types.ts";
import { projectDimensionDocs } from "./account.ts";

/** The agent groups of an agent; the spec gives these meanings for the same fields of event records. */
export const agentGroupColumns = columns({
  okind: hash("Identifier of the per-kind agent group.").optional,
  okindName: text("Name of the per-kind agent group."),
  onode: hash("Identifier of the per-server agent group.").optional,
  onodeName: text("Name of the per-server agent group."),
});

/**
 * Agents active in a window, one row per agent. pcode and first_seen_at (shared meanings) are the
 * table's; last_seen_at, declared here for its meaning, follows first_seen_at in the table.
 */
export const agentInventoryColumns = columns({
  // Required and not null: the table's key with pcode.
  oid: of(int32, () => i64().notNull(), { text: "Agent identifier.", conversion: HASH32 }),
  oname: text("Agent name."),
  alias: text(named("Alias of the agent.")),
  initial: text(named("Initial of the agent.")),
  otype: text(named('Agent type, e.g. "database".')),
  // "0" as a string in samples; kept as text like the spec says.
  subtype: of(
    opt(z.union([z.string(), z.number()]).transform(String)),
    textColumn,
    named("Agent subtype.", { conversion: 'kept as text (the sample sends "0")' }),
  ),
  active: flag("Agent state: true while the agent is active."),
  ...agentGroupColumns,
  ip: text(named("IP address of the agent.")),
  "agent.version": text(named("Agent version.", { conversion: "dotted key agent.version -> agent_version" })),
  cpuCores: integerOf(named("CPU cores of the agent's host.", { unit: "count" })),
  // The window whose answer last listed the agent: the request's input.
  window_start: local(ts, "Start of the window whose answer last listed the agent (the request's stime)."),
  window_end: local(ts, "End (exclusive) of the window whose answer last listed the agent (the request's etime)."),
  last_seen_at: local(
    () => ts().notNull().defaultNow(),
    "When apm-sync last stored a window answer that listed the agent (its clock, not the window's).",
  ),
});

/** A spot value: sent as a string ("600.0"). */
const spot = (text: string, unit = "count") => of(opt(num), f64, says(text, { unit, conversion: AS_NUMBER }));

/** Spot values of a project; the record's own pcode (a number) is read, the column is the shared pcode. */
export const spotColumns = columns({
  act_agent: spot("Active agents."),
  inact_agent: spot("Inactive agents."),
  host: spot("Hosts."),
  cpucore: spot("Sum of CPU cores of the hosts."),
  txcount: spot("Transactions (the period they are counted over is not documented)."),
  tps: spot("Transactions per second.", "transactions per second"),
  user: spot("Active users over the last 5 minutes."),
  actx: spot("Active transactions."),
  rtime: spot("Average response time.", "ms"),
  cpu: spot("Average CPU use.", "percent"),
  threadpool_active: spot("Threads active in thread pools."),
  threadpool_queue: spot("Threads queued in thread pools."),
  dbconn_total: spot("Database connections: all."),
  dbconn_act: spot("Database connections: active."),
  dbconn_idle: spot("Database connections: idle."),
  act_method: spot("Active methods."),
  act_sql: spot("Active SQL statements."),
  act_httpc: spot("Active outbound HTTP calls."),
  act_dbc: spot("Active database connections."),
  act_socket: spot("Active sockets."),
  // Absent in the old docs.
  apdex: spot("Apdex value.", "Apdex score (0 to 1 by the Apdex definition)"),
});

/**
 * A scalar operation's answer is a bare number, not a record: its value and the metric it answers
 * (the catalogue entry's constant) are no record fields. captured_at (shared) sits between them.
 */
export const scalarColumns = columns({
  metric: local(() => textColumn().notNull(), {
    text: "The operation: act_agent, inact_agent, host, cpucore, txcount, tps, user, actx, rtime, cpu or apdex.",
    conversion: "the catalogue entry's constant, not a response field",
  }),
  value: local(f64, {
    field: "(text/plain body)",
    text: "The number the operation returned (see spot_values for each metric's meaning).",
    unit: "per metric: rtime ms, cpu percent, tps transactions per second, apdex Apdex score, the others counts",
    conversion: '5, 93.07 or "66.0", stored as a number',
  }),
});

const tables: Record<string, TableDoc> = {
  agent_inventory: {
    description:
      "Agents active in a time window, one row per agent (oid): each window that lists an agent refreshes its row, so " +
      "the row holds the agent as the latest such answer showed it.",
    columns: docsOf(agentInventoryColumns),
  },
  spot_values: {
    description: "Current values of each project (spot values), one row per capture: one capture per sync run.",
    columns: docsOf(spotColumns),
  },
  scalar_values: {
    description:
      "The 11 scalar operations (GET /open/api/{metric}: a bare number), one row per metric and capture; " +
      "each metric means what the spot value of the same name means.",
    columns: docsOf(scalarColumns),
  },
};

export const projectDocs: DocGroup = {
  title: "Project detail, agents, spot and scalar values",
  tables: { ...projectDimensionDocs, ...tables },
};
