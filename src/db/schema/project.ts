// Project-level tables: agents in a window, event settings and history, spot and scalar values.
import { boolean, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { dimensionColumns, f64, factColumns, i64, partitionedByMonth, ts } from "./columns.ts";

/** Agents active in a time window: one row per agent, refreshed by every window that lists it. */
export const agentInventory = pgTable(
  "agent_inventory",
  {
    pcode: i64().notNull(),
    oid: i64().notNull(),
    oname: text(),
    alias: text(),
    initial: text(),
    otype: text(),
    // "0" as a string in samples; kept as text like the spec says.
    subtype: text(),
    active: boolean(),
    okind: i64(),
    okind_name: text(),
    onode: i64(),
    onode_name: text(),
    ip: text(),
    // dotted key `agent.version`.
    agent_version: text(),
    cpu_cores: integer(),
    /** The window whose answer last listed the agent. */
    window_start: ts(),
    window_end: ts(),
    first_seen_at: ts().notNull().defaultNow(),
    last_seen_at: ts().notNull().defaultNow(),
    ...factColumns(),
  },
  (t) => [primaryKey({ columns: [t.pcode, t.oid] })],
);

/**
 * One setting entry of the bulk settings download: the union of the fields of every event type
 * (BASIC, METRICS, COMPOSITE_METRICS, TRANSACTION), null where a type lacks one. List and object
 * fields stay JSON: their element shapes are undocumented.
 */
export const eventSettings = pgTable(
  "event_settings",
  {
    pcode: i64().notNull(),
    event_type: text().notNull(),
    setting_id: text().notNull(),
    product_type: text(),
    platform: text(),
    enabled: boolean(),
    stateful: boolean(),
    version: integer(),
    // BASIC
    critical_enabled: boolean(),
    warning_enabled: boolean(),
    silent_period: integer(),
    meta_id: text(),
    display_name: text(),
    critical_threshold: text(),
    warning_threshold: text(),
    message: text(),
    repeat_duration: integer(),
    repeat_count: integer(),
    conditions: jsonb(),
    select_condition: jsonb(),
    // METRICS
    event_message: text(),
    select: text(),
    alert_label: jsonb(),
    rule: text(),
    silent_sec: integer(),
    event_title: text(),
    event_level: integer(),
    category: text(),
    // COMPOSITE_METRICS (snake_case already in the API)
    interval_sec: integer(),
    query: text(),
    time_trim: integer(),
    time_period: integer(),
    /** A serialised JSON widget definition, kept as text. */
    desc: text(),
    // TRANSACTION
    silent_time: text(),
    app_ctx: jsonb(),
    exclude_app_ctx: jsonb(),
    status: jsonb(),
    exclude_status: jsonb(),
    error_class: jsonb(),
    exclude_error_class: jsonb(),
    error_message: jsonb(),
    exclude_error_message: jsonb(),
    url: jsonb(),
    exclude_url: jsonb(),
    limit: integer(),
    condition_value: f64(),
    condition_type: text(),
    result_type: text(),
    ...dimensionColumns(),
  },
  (t) => [primaryKey({ columns: [t.pcode, t.event_type, t.setting_id] })],
);

/**
 * Event history: one row per event, updated as its state changes (open -> resolved). Partitioned
 * by month on event_time, the time the event occurred: the key holds it too (Postgres requires the
 * partition column in every unique key). It is the occurrence time, which no answer changes (the
 * spec, its samples and the sandbox move updateTime, offTime, status and disabled instead); should
 * a server ever move it, the write replaces the event's row at its old time (db/write/rowSink.ts).
 */
export const events = partitionedByMonth(
  pgTable(
    "events",
    {
      pcode: i64().notNull(),
      /** uuid when present (documented as integer, really a hex string), else the numeric id. */
      event_key: text().notNull(),
      uuid: text(),
      id: i64(),
      metric_name: text(),
      onode_name: text(),
      display_tag: text(),
      metric_value: f64(),
      oid: i64(),
      title: text(),
      okind: i64(),
      ack_count: integer(),
      event_time: ts().notNull(),
      disabled: boolean(),
      acknowledges: jsonb(),
      stateful: boolean(),
      product: text(),
      level: text(),
      update_time: ts(),
      message: text(),
      metric_threshold: f64(),
      oname: text(),
      escalation: boolean(),
      tag_count: boolean(),
      system_event: boolean(),
      // 0 while the event is open: the mapper stores null then.
      off_time: ts(),
      category: text(),
      okind_name: text(),
      onode: i64(),
      snapshot: text(),
      status: text(),
      ...factColumns(),
    },
    (t) => [primaryKey({ columns: [t.pcode, t.event_key, t.event_time] }), index("events_pcode_event_time_idx").on(t.pcode, t.event_time)],
  ),
  "event_time",
  // An event is read again while it stays open (sync.openEventLookback, 7 days by default); one
  // whose time lies more than a month before the window it came with is a server's stray time.
  { movable: true, before: 31 * 86_400_000 },
);

/** Spot values: every value arrives as a string ("600.0"); one row per capture. */
export const spotValues = pgTable(
  "spot_values",
  {
    pcode: i64().notNull(),
    captured_at: ts().notNull(),
    act_agent: f64(),
    inact_agent: f64(),
    host: f64(),
    cpucore: f64(),
    txcount: f64(),
    tps: f64(),
    user: f64(),
    actx: f64(),
    rtime: f64(),
    cpu: f64(),
    threadpool_active: f64(),
    threadpool_queue: f64(),
    dbconn_total: f64(),
    dbconn_act: f64(),
    dbconn_idle: f64(),
    act_method: f64(),
    act_sql: f64(),
    act_httpc: f64(),
    act_dbc: f64(),
    act_socket: f64(),
    apdex: f64(),
    ...factColumns(),
  },
  (t) => [primaryKey({ columns: [t.pcode, t.captured_at] })],
);

/** The 11 text/plain scalar operations: metric = operation name (act_agent, tps, ...). */
export const scalarValues = pgTable(
  "scalar_values",
  { pcode: i64().notNull(), metric: text().notNull(), captured_at: ts().notNull(), value: f64(), ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.metric, t.captured_at] })],
);
