// The event family, in one place (project token + pcode; spec "Event record (event history)"): event
// history, one row per event, updated as its state changes. Its columns (declared once:
// src/kernel/declare.ts), its table, its dictionary entry, its record and its operation; the
// dictionary's group "Events" also holds event settings (event-settings.ts).
import { getTableName } from "drizzle-orm";
import { index, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, epoch, flag, hash, integerOf, local, of, says, shapeOf, tableOf, text } from "../kernel/declare.ts";
import { type DocGroup, EPOCH_MS, LOWERED } from "../kernel/docs.ts";
import { epochMs, epochMsOrZero, ident, int, lower, num, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { f64, i64, ts } from "../kernel/sql-types.ts";
import { docEntry, factColumns, partitionedByMonth } from "../kernel/tables.ts";
import { bareArray } from "../schemas/envelope.ts";
import { agentGroupColumns } from "./agents.ts";
import { EVENT_COMMON, eventSettingsDoc, eventSettingsOperation, json } from "./event-settings.ts";
import { DAY, defineOperation } from "./types.ts";

// ---- Columns ----

// A metric's value and threshold: sent as strings.
const metricUnit = "that of the metric (not documented)";

/**
 * An event record. Its own pcode ("7" in one record, 7 in the next) is read and replaced by the
 * project asked for: the column is the table's shared pcode. `process` and `triggerId` are in
 * responses with no documented meaning: they land in `extra`.
 */
export const eventColumns = columns({
  // uuid when present (documented as integer, really a hex string), else the numeric id.
  event_key: local(() => textColumn().notNull(), {
    text: "Key of the event: uuid when present, else id.",
    conversion: "derived by apm-sync",
  }),
  uuid: of(
    opt(ident),
    textColumn,
    says("Event unique identifier.", { conversion: "documented as an integer, sent as 32 hex digits: kept as text" }),
  ),
  id: of(int, i64, "Event identifier."),
  metricName: text("Metric name."),
  onodeName: agentGroupColumns.onodeName,
  displayTag: text("Value used to show the event state tag."),
  metricValue: of(opt(num), f64, says("Metric value.", { unit: metricUnit, conversion: 'a string ("99.73802"), stored as a number' })),
  oid: hash("Agent identifier.").optional,
  title: text("Event title."),
  okind: agentGroupColumns.okind,
  ackCount: integerOf(says("Number of handling records.", { unit: "count" })),
  eventTime: of(epochMs, () => ts().notNull(), says("Time of occurrence.", { conversion: EPOCH_MS })),
  disabled: flag("Whether the event has ended."),
  acknowledges: json(z.array(z.unknown()), "Handling records, an array of arrays (their entries' fields are not documented)."),
  stateful: flag("Whether resolved-event notification is used."),
  product: text("Server type."),
  level: of(opt(lower), textColumn, says("Warning level.", { conversion: LOWERED })), // "Critical"
  updateTime: epoch("Event update time."),
  message: text("Event message."),
  metricThreshold: of(opt(num), f64, says("Threshold.", { unit: metricUnit, conversion: 'a string ("90"), stored as a number' })),
  oname: text("Agent name."),
  escalation: flag("Whether repeated notification is on."),
  tagCount: flag("Whether it is an event of the TagCount category."),
  systemEvent: flag("Whether it is a system event."),
  offTime: of(
    opt(epochMsOrZero),
    ts,
    says("Time of resolution; null while the event is open.", { conversion: `${EPOCH_MS}; 0 (not resolved yet) is stored as null` }),
  ),
  category: text("TagCount category."),
  okindName: agentGroupColumns.okindName,
  onode: agentGroupColumns.onode,
  snapshot: text("Snapshot at the time of the event; only for basic server events."),
  status: of(opt(lower), textColumn, says("Event state (allowed values not documented).", { conversion: LOWERED })), // "ON"
});

// ---- Table ----

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

// ---- The dictionary's entries ----

const [eventsName, eventsDoc] = docEntry(
  events,
  "Event history: one row per event, updated in place as its state changes (open -> resolved). Windows of events " +
    "still open are re-read for a while so that their resolution is seen.",
  eventColumns,
);

export const eventDocs: DocGroup = {
  title: "Events",
  tables: Object.fromEntries([
    eventSettingsDoc,
    [
      eventsName,
      {
        ...eventsDoc,
        columns: {
          ...eventsDoc.columns,
          extra: {
            text: "Fields with no column, under their original key: process and triggerId (present in responses, meaning not documented), and any new field.",
          },
        },
      },
    ],
  ]),
};

// ---- Record ----

// The record's own pcode ("7" in one record, 7 in the next) is read, then replaced by the project
// asked for (engine/rows.ts): its column is the table's shared pcode, not one of the declared.
export const eventRecord = recordSchema({ pcode, ...shapeOf(eventColumns) });

// ---- Operations ----

export const eventOperations = [
  eventSettingsOperation,
  defineOperation({
    ...EVENT_COMMON,
    id: "project.event_history",
    summary: "event history (bare array)",
    path: "/open/api/json/event/history",
    // The parameter table says `oid`, the sample request `oids`: both are accepted as params. The
    // engine reads all agents' events and sends neither.
    query: ["stime", "etime", "progress", "oid", "oids", "okinds", "onodes"],
    // Not limited by the spec; one day keeps pages small and matches the other window operations.
    windowLimitMs: DAY,
    envelope: bareArray,
    records: { at: null, schema: eventRecord },
    stream: {
      kind: "points",
      table: getTableName(events),
      enabledByDefault: true,
      grainMs: DAY,
      // Events change state after they open: re-read a day each run (open ones longer, see config).
      lookbackMs: DAY,
      // An event is open until the server gives it an off time; a disabled one never resolves.
      reReadOpen: { nullColumns: ["off_time"], trueColumns: ["disabled"] },
      // uuid where present (documented as an integer, really a hex string), else the numeric id.
      derive: (row) => ({ event_key: row.uuid != null && row.uuid !== "" ? String(row.uuid) : String(row.id) }),
    },
  }),
] as const;
