// Project-level tables: agents in a window, event settings and history, spot and scalar values. The
// columns are declared once, with the records' fields and their meanings, in
// catalogue/dictionary/project.ts and catalogue/dictionary/events.ts.
import { index, pgTable, primaryKey } from "drizzle-orm/pg-core";
import { eventColumns, eventSettingColumns } from "../../catalogue/dictionary/events.ts";
import { agentInventoryColumns, scalarColumns, spotColumns } from "../../catalogue/dictionary/project.ts";
import { tableOf } from "../../kernel/declare.ts";
import { i64, ts } from "../../kernel/sql-types.ts";
import { dimensionColumns, factColumns, partitionedByMonth } from "../../kernel/tables.ts";

/**
 * Agents active in a time window: one row per agent, refreshed by every window that lists it.
 * first_seen_at (a shared meaning) keeps its place between the window and last_seen_at: the
 * columns stay in the order the table was made with.
 */
const { last_seen_at, ...agentInWindow } = tableOf(agentInventoryColumns);
export const agentInventory = pgTable(
  "agent_inventory",
  { pcode: i64().notNull(), ...agentInWindow, first_seen_at: ts().notNull().defaultNow(), last_seen_at, ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.oid] })],
);

/**
 * One setting entry of the bulk settings download: the union of the fields of every event type
 * (BASIC, METRICS, COMPOSITE_METRICS, TRANSACTION), null where a type lacks one. List and object
 * fields stay JSON: their element shapes are undocumented.
 */
export const eventSettings = pgTable(
  "event_settings",
  { pcode: i64().notNull(), ...tableOf(eventSettingColumns), ...dimensionColumns() },
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
  pgTable("events", { pcode: i64().notNull(), ...tableOf(eventColumns), ...factColumns() }, (t) => [
    primaryKey({ columns: [t.pcode, t.event_key, t.event_time] }),
    index("events_pcode_event_time_idx").on(t.pcode, t.event_time),
  ]),
  "event_time",
  // An event is read again while it stays open (sync.openEventLookback, 7 days by default); one
  // whose time lies more than a month before the window it came with is a server's stray time.
  { movable: true, before: 31 * 86_400_000 },
);

/** Spot values: every value arrives as a string ("600.0"); one row per capture. */
export const spotValues = pgTable(
  "spot_values",
  { pcode: i64().notNull(), captured_at: ts().notNull(), ...tableOf(spotColumns), ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.captured_at] })],
);

/** The 11 text/plain scalar operations: metric = operation name (act_agent, tps, ...). */
const { metric, value } = tableOf(scalarColumns);
export const scalarValues = pgTable(
  "scalar_values",
  { pcode: i64().notNull(), metric, captured_at: ts().notNull(), value, ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.metric, t.captured_at] })],
);
