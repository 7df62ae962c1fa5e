// Event settings and history. The columns are declared once, with the records' fields and their
// meanings, in catalogue/dictionary/events.ts.
import { index, pgTable, primaryKey } from "drizzle-orm/pg-core";
import { eventColumns, eventSettingColumns } from "../../catalogue/dictionary/events.ts";
import { tableOf } from "../../kernel/declare.ts";
import { i64 } from "../../kernel/sql-types.ts";
import { dimensionColumns, factColumns, partitionedByMonth } from "../../kernel/tables.ts";

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
