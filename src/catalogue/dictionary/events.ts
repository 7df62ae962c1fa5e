// Event settings and event history: each table's columns declared once (declare.ts), from which the
// record schemas (src/schemas/events.ts), the tables (src/db/schema/project.ts) and these dictionary
// entries come. Spec "Event settings", "Event record (event history)".
import { jsonb, type PgColumnBuilderBase, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import {
  Column,
  columns,
  docsOf,
  epoch,
  flag,
  hash,
  integerOf,
  jsonList,
  local,
  measure,
  named,
  of,
  says,
  text,
} from "../../kernel/declare.ts";
import { type DocGroup, EPOCH_MS, JSON_KEPT, LOWERED, type TableDoc, UNDOCUMENTED } from "../../kernel/docs.ts";
import { bool, epochMs, epochMsOrZero, ident, int, jsonText, lower, num } from "../../kernel/primitives.ts";
import { opt, snakeCase } from "../../kernel/record.ts";
import { f64, i64, ts } from "../../kernel/sql-types.ts";
import { agentGroupColumns } from "../agents.ts";

// Setting entries of four event types share one table; each column says which types carry it.
const B = "BASIC";
const M = "METRICS";
const C = "COMPOSITE_METRICS";
const T = "TRANSACTION";

/** A list or object kept as JSON, what it holds said in the column's words (JSON_KEPT: not documented). */
const json = <Z extends z.ZodType>(zod: Z, text: string) => of(opt(zod), jsonb, says(text, { conversion: "kept as JSON" }));

/**
 * A field METRICS or TRANSACTION spell in camelCase (the key) and COMPOSITE_METRICS in snake_case:
 * the dictionary names both spellings (a field in the doc wins over the key in docsOf).
 */
function bothSpellings<Z extends z.ZodType, P extends PgColumnBuilderBase>(camel: string, column: Column<Z, P>) {
  return new Column(column.zod, column.pg, { ...column.doc, field: `${camel} / ${snakeCase(camel)}` });
}

/** Fields of the product an entry belongs to. */
export const settingProductColumns = columns({
  productType: text("Product type the settings belong to."),
  platform: text("Platform the settings belong to."),
});

/**
 * Fields of the setting entries, keyed as BASIC, METRICS and TRANSACTION spell them (COMPOSITE_METRICS
 * sends the column's name): which entry type carries which field is the parser's (ENTRY_FIELDS).
 */
export const settingEntryColumns = columns({
  enabled: flag(named("Whether the setting is enabled (all types).")),
  stateful: flag(named(`Whether the event is stateful (${B}, ${M}, ${C}).`)),
  version: integerOf(named(`Version of the setting (${B}, ${M}).`)),
  criticalEnabled: flag(named(`Critical level enabled (${B}).`)),
  warningEnabled: flag(named(`Warning level enabled (${B}).`)),
  silentPeriod: integerOf(named(`Silent period (${B}).`, { unit: UNDOCUMENTED })),
  metaId: text(named(`Metadata identifier (${B}).`)),
  displayName: text(named(`Display name (${B}).`)),
  criticalThreshold: text(`Critical threshold, an expression (${B}).`),
  warningThreshold: text(`Warning threshold, an expression (${B}).`),
  message: text(`Event message; may contain \${field} references (${B}).`),
  repeatDuration: integerOf(named(`Repeat duration (${B}, ${M}).`, { unit: UNDOCUMENTED })),
  repeatCount: integerOf(named(`Repeat count (${B}, ${M}).`, { unit: "count" })),
  conditions: json(
    z.array(z.looseObject({ level: opt(int), rule: opt(z.string()), enabled: opt(bool) })),
    `Condition entries (${B}, ${M}), each with level (integer), rule (an expression) and enabled.`,
  ),
  selectCondition: of(
    opt(z.record(z.string(), z.unknown())),
    jsonb,
    named(`Selection condition object (${B}).`, { conversion: JSON_KEPT }),
  ),
  eventMessage: bothSpellings("eventMessage", text(named(`Event message (${M}, ${C}).`))),
  select: text(`Selection, an expression (${M}).`),
  alertLabel: jsonList(named(`Alert labels (${M}).`)),
  rule: text(named(`Rule (${M}, ${C}).`)),
  silentSec: bothSpellings("silentSec", integerOf(named(`Silent time (${M}, ${C}).`, { unit: "seconds, by its name (not documented)" }))),
  eventTitle: bothSpellings("eventTitle", text(named(`Event title (${M}, ${C}, ${T}).`))),
  // Numeric in the example, a string in the docs' schema.
  eventLevel: bothSpellings(
    "eventLevel",
    integerOf(named(`Event level (${M}, ${C}, ${T}).`, { conversion: "integer (a string in the docs' schema)" })),
  ),
  category: text(named(`Category (${M}).`)),
  // COMPOSITE_METRICS only: snake_case already in the API.
  interval_sec: integerOf(named(`Interval (${C}).`, { unit: "seconds, by its name (not documented)" })),
  query: text(`Multi-line query text (${C}).`),
  time_trim: integerOf(named(`Time trim (${C}).`, { unit: UNDOCUMENTED })),
  time_period: integerOf(named(`Time period (${C}).`, { unit: UNDOCUMENTED })),
  desc: of(opt(jsonText), textColumn, says(`A serialised JSON widget definition (${C}).`, { conversion: "kept as the text sent" })),
  // A string per the spec; the docs example even has "60000," (YAML slip), which stays text.
  silentTime: of(
    opt(z.union([z.string(), z.number()]).transform(String)),
    textColumn,
    named(`Silent time (${T}).`, { unit: UNDOCUMENTED, conversion: "kept as text (a string per the spec)" }),
  ),
  appCtx: jsonList(named(`Application contexts (${T}).`)),
  excludeAppCtx: jsonList(named(`Excluded application contexts (${T}).`)),
  status: jsonList(named(`Statuses (${T}).`)),
  excludeStatus: json(z.array(z.unknown()), `Excluded statuses, strings (${T}).`),
  errorClass: jsonList(named(`Error classes (${T}).`)),
  excludeErrorClass: jsonList(named(`Excluded error classes (${T}).`)),
  errorMessage: jsonList(named(`Error messages (${T}).`)),
  excludeErrorMessage: jsonList(named(`Excluded error messages (${T}).`)),
  url: json(z.array(z.unknown()), `URL patterns (${T}).`),
  excludeUrl: json(z.array(z.unknown()), `Excluded URL patterns (${T}).`),
  limit: integerOf(named(`Limit (${T}).`)),
  conditionValue: measure(`Condition value (${T}).`),
  conditionType: text(named(`Condition type (${T}).`)),
  resultType: text(named(`Result type (${T}).`)),
});

/**
 * One row per setting entry: the entry's type and id, its product's fields, and the union of the
 * fields of every entry type (null where a type lacks one). pcode is the table's (shared meaning).
 */
export const eventSettingColumns = columns({
  event_type: local(() => textColumn().notNull(), {
    field: "events[].{type}",
    text: "Event type of the entry: BASIC, METRICS, COMPOSITE_METRICS or TRANSACTION.",
    conversion: "upper-cased key of the events object",
  }),
  // `id` of every entry type (the parser reads it as a required string).
  setting_id: local(() => textColumn().notNull(), {
    field: "id",
    text: "Identifier of the setting entry (all types).",
    conversion: "renamed id -> setting_id",
  }),
  ...settingProductColumns,
  ...settingEntryColumns,
});

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

const eventSettings: TableDoc = {
  description:
    "Event settings of each project, one row per setting entry of the bulk settings download (the settings screen's " +
    "JSON): the union of the fields of the BASIC, METRICS, COMPOSITE_METRICS and TRANSACTION entries, null where an " +
    "entry type has no such field. List and object fields stay JSON: their element shapes are not documented.",
  columns: docsOf(eventSettingColumns),
};

const events: TableDoc = {
  description:
    "Event history: one row per event, updated in place as its state changes (open -> resolved). Windows of events " +
    "still open are re-read for a while so that their resolution is seen.",
  columns: {
    ...docsOf(eventColumns),
    extra: {
      text: "Fields with no column, under their original key: process and triggerId (present in responses, meaning not documented), and any new field.",
    },
  },
};

export const eventDocs: DocGroup = { title: "Events", tables: { event_settings: eventSettings, events } };
