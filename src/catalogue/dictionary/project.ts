// Agents active in a window, spot values and the 11 scalar operations (project token + pcode).
// Spec "Agent (active in a time window)", "Spot values", "Scalar project operations".
import { AS_NUMBER, type ColumnDoc, type DocGroup, field, HASH32, named, type TableDoc } from "./types.ts";

// The spec gives these meanings for the same fields of event records.
export const AGENT_GROUPS: Readonly<Record<string, ColumnDoc>> = {
  okind: field("okind", "Identifier of the per-kind agent group.", { conversion: HASH32 }),
  okind_name: field("okindName", "Name of the per-kind agent group."),
  onode: field("onode", "Identifier of the per-server agent group.", { conversion: HASH32 }),
  onode_name: field("onodeName", "Name of the per-server agent group."),
};

function spot(name: string, text: string, unit = "count"): ColumnDoc {
  return field(name, text, { unit, conversion: AS_NUMBER });
}

const tables: Record<string, TableDoc> = {
  agent_inventory: {
    description:
      "Agents active in a time window, one row per agent (oid): each window that lists an agent refreshes its row, so " +
      "the row holds the agent as the latest such answer showed it.",
    columns: {
      oid: field("oid", "Agent identifier.", { conversion: HASH32 }),
      oname: field("oname", "Agent name."),
      alias: named("alias", "Alias of the agent."),
      initial: named("initial", "Initial of the agent."),
      otype: named("otype", 'Agent type, e.g. "database".'),
      subtype: named("subtype", "Agent subtype.", { conversion: 'kept as text (the sample sends "0")' }),
      active: field("active", "Agent state: true while the agent is active."),
      ...AGENT_GROUPS,
      ip: named("ip", "IP address of the agent."),
      agent_version: named("agent.version", "Agent version.", { conversion: "dotted key agent.version -> agent_version" }),
      cpu_cores: named("cpuCores", "CPU cores of the agent's host.", { unit: "count" }),
      window_start: { text: "Start of the window whose answer last listed the agent (the request's stime)." },
      window_end: { text: "End (exclusive) of the window whose answer last listed the agent (the request's etime)." },
      last_seen_at: { text: "When apm-sync last stored a window answer that listed the agent (its clock, not the window's)." },
    },
  },
  spot_values: {
    description: "Current values of each project (spot values), one row per capture: one capture per sync run.",
    columns: {
      act_agent: spot("act_agent", "Active agents."),
      inact_agent: spot("inact_agent", "Inactive agents."),
      host: spot("host", "Hosts."),
      cpucore: spot("cpucore", "Sum of CPU cores of the hosts."),
      txcount: spot("txcount", "Transactions (the period they are counted over is not documented)."),
      tps: spot("tps", "Transactions per second.", "transactions per second"),
      user: spot("user", "Active users over the last 5 minutes."),
      actx: spot("actx", "Active transactions."),
      rtime: spot("rtime", "Average response time.", "ms"),
      cpu: spot("cpu", "Average CPU use.", "percent"),
      threadpool_active: spot("threadpool_active", "Threads active in thread pools."),
      threadpool_queue: spot("threadpool_queue", "Threads queued in thread pools."),
      dbconn_total: spot("dbconn_total", "Database connections: all."),
      dbconn_act: spot("dbconn_act", "Database connections: active."),
      dbconn_idle: spot("dbconn_idle", "Database connections: idle."),
      act_method: spot("act_method", "Active methods."),
      act_sql: spot("act_sql", "Active SQL statements."),
      act_httpc: spot("act_httpc", "Active outbound HTTP calls."),
      act_dbc: spot("act_dbc", "Active database connections."),
      act_socket: spot("act_socket", "Active sockets."),
      apdex: spot("apdex", "Apdex value.", "Apdex score (0 to 1 by the Apdex definition)"),
    },
  },
  scalar_values: {
    description:
      "The 11 scalar operations (GET /open/api/{metric}: a bare number), one row per metric and capture; " +
      "each metric means what the spot value of the same name means.",
    columns: {
      metric: {
        text: "The operation: act_agent, inact_agent, host, cpucore, txcount, tps, user, actx, rtime, cpu or apdex.",
        conversion: "the catalogue entry's constant, not a response field",
      },
      value: {
        field: "(text/plain body)",
        text: "The number the operation returned (see spot_values for each metric's meaning).",
        unit: "per metric: rtime ms, cpu percent, tps transactions per second, apdex Apdex score, the others counts",
        conversion: '5, 93.07 or "66.0", stored as a number',
      },
    },
  },
};

export const projectDocs: DocGroup = { title: "Agents, spot and scalar values", tables };
