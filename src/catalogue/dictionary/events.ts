// Event settings and event history. Spec "Event settings", "Event record (event history)".
import { AGENT_GROUPS } from "./project.ts";
import { type DocGroup, EPOCH_MS, epoch, field, HASH32, JSON_KEPT, LOWERED, named, type TableDoc } from "./types.ts";

// Setting entries of four event types share one table; each column says which types carry it.
const B = "BASIC";
const M = "METRICS";
const C = "COMPOSITE_METRICS";
const T = "TRANSACTION";

const eventSettings: TableDoc = {
  description:
    "Event settings of each project, one row per setting entry of the bulk settings download (the settings screen's " +
    "JSON): the union of the fields of the BASIC, METRICS, COMPOSITE_METRICS and TRANSACTION entries, null where an " +
    "entry type has no such field. List and object fields stay JSON: their element shapes are not documented.",
  columns: {
    event_type: field("events[].{type}", "Event type of the entry: BASIC, METRICS, COMPOSITE_METRICS or TRANSACTION.", {
      conversion: "upper-cased key of the events object",
    }),
    setting_id: field("id", "Identifier of the setting entry (all types).", { conversion: "renamed id -> setting_id" }),
    product_type: field("productType", "Product type the settings belong to."),
    platform: field("platform", "Platform the settings belong to."),
    enabled: named("enabled", "Whether the setting is enabled (all types)."),
    stateful: named("stateful", `Whether the event is stateful (${B}, ${M}, ${C}).`),
    version: named("version", `Version of the setting (${B}, ${M}).`),
    critical_enabled: named("criticalEnabled", `Critical level enabled (${B}).`),
    warning_enabled: named("warningEnabled", `Warning level enabled (${B}).`),
    silent_period: named("silentPeriod", `Silent period (${B}).`, { unit: "not documented" }),
    meta_id: named("metaId", `Metadata identifier (${B}).`),
    display_name: named("displayName", `Display name (${B}).`),
    critical_threshold: field("criticalThreshold", `Critical threshold, an expression (${B}).`),
    warning_threshold: field("warningThreshold", `Warning threshold, an expression (${B}).`),
    message: field("message", `Event message; may contain \${field} references (${B}).`),
    repeat_duration: named("repeatDuration", `Repeat duration (${B}, ${M}).`, { unit: "not documented" }),
    repeat_count: named("repeatCount", `Repeat count (${B}, ${M}).`, { unit: "count" }),
    conditions: field("conditions", `Condition entries (${B}, ${M}), each with level (integer), rule (an expression) and enabled.`, {
      conversion: "kept as JSON",
    }),
    select_condition: named("selectCondition", `Selection condition object (${B}).`, { conversion: JSON_KEPT }),
    event_message: named("eventMessage / event_message", `Event message (${M}, ${C}).`),
    select: field("select", `Selection, an expression (${M}).`),
    alert_label: named("alertLabel", `Alert labels (${M}).`, { conversion: JSON_KEPT }),
    rule: named("rule", `Rule (${M}, ${C}).`),
    silent_sec: named("silentSec / silent_sec", `Silent time (${M}, ${C}).`, { unit: "seconds, by its name (not documented)" }),
    event_title: named("eventTitle / event_title", `Event title (${M}, ${C}, ${T}).`),
    event_level: named("eventLevel / event_level", `Event level (${M}, ${C}, ${T}).`, {
      conversion: "integer (a string in the docs' schema)",
    }),
    category: named("category", `Category (${M}).`),
    interval_sec: named("interval_sec", `Interval (${C}).`, { unit: "seconds, by its name (not documented)" }),
    query: field("query", `Multi-line query text (${C}).`),
    time_trim: named("time_trim", `Time trim (${C}).`, { unit: "not documented" }),
    time_period: named("time_period", `Time period (${C}).`, { unit: "not documented" }),
    desc: field("desc", `A serialised JSON widget definition (${C}).`, { conversion: "kept as the text sent" }),
    silent_time: named("silentTime", `Silent time (${T}).`, { unit: "not documented", conversion: "kept as text (a string per the spec)" }),
    app_ctx: named("appCtx", `Application contexts (${T}).`, { conversion: JSON_KEPT }),
    exclude_app_ctx: named("excludeAppCtx", `Excluded application contexts (${T}).`, { conversion: JSON_KEPT }),
    status: named("status", `Statuses (${T}).`, { conversion: JSON_KEPT }),
    exclude_status: field("excludeStatus", `Excluded statuses, strings (${T}).`, { conversion: "kept as JSON" }),
    error_class: named("errorClass", `Error classes (${T}).`, { conversion: JSON_KEPT }),
    exclude_error_class: named("excludeErrorClass", `Excluded error classes (${T}).`, { conversion: JSON_KEPT }),
    error_message: named("errorMessage", `Error messages (${T}).`, { conversion: JSON_KEPT }),
    exclude_error_message: named("excludeErrorMessage", `Excluded error messages (${T}).`, { conversion: JSON_KEPT }),
    url: field("url", `URL patterns (${T}).`, { conversion: "kept as JSON" }),
    exclude_url: field("excludeUrl", `Excluded URL patterns (${T}).`, { conversion: "kept as JSON" }),
    limit: named("limit", `Limit (${T}).`),
    condition_value: named("conditionValue", `Condition value (${T}).`, { unit: "not documented" }),
    condition_type: named("conditionType", `Condition type (${T}).`),
    result_type: named("resultType", `Result type (${T}).`),
  },
};

const events: TableDoc = {
  description:
    "Event history: one row per event, updated in place as its state changes (open -> resolved). Windows of events " +
    "still open are re-read for a while so that their resolution is seen.",
  columns: {
    event_key: { text: "Key of the event: uuid when present, else id.", conversion: "derived by apm-sync" },
    uuid: field("uuid", "Event unique identifier.", { conversion: "documented as an integer, sent as 32 hex digits: kept as text" }),
    id: field("id", "Event identifier."),
    metric_name: field("metricName", "Metric name."),
    onode_name: AGENT_GROUPS.onode_name!,
    display_tag: field("displayTag", "Value used to show the event state tag."),
    metric_value: field("metricValue", "Metric value.", {
      unit: "that of the metric (not documented)",
      conversion: 'a string ("99.73802"), stored as a number',
    }),
    oid: field("oid", "Agent identifier.", { conversion: HASH32 }),
    title: field("title", "Event title."),
    okind: AGENT_GROUPS.okind!,
    ack_count: field("ackCount", "Number of handling records.", { unit: "count" }),
    event_time: epoch("eventTime", "Time of occurrence."),
    disabled: field("disabled", "Whether the event has ended."),
    acknowledges: field("acknowledges", "Handling records, an array of arrays (their entries' fields are not documented).", {
      conversion: "kept as JSON",
    }),
    stateful: field("stateful", "Whether resolved-event notification is used."),
    product: field("product", "Server type."),
    level: field("level", "Warning level.", { conversion: LOWERED }),
    update_time: epoch("updateTime", "Event update time."),
    message: field("message", "Event message."),
    metric_threshold: field("metricThreshold", "Threshold.", {
      unit: "that of the metric (not documented)",
      conversion: 'a string ("90"), stored as a number',
    }),
    oname: field("oname", "Agent name."),
    escalation: field("escalation", "Whether repeated notification is on."),
    tag_count: field("tagCount", "Whether it is an event of the TagCount category."),
    system_event: field("systemEvent", "Whether it is a system event."),
    off_time: epoch("offTime", "Time of resolution; null while the event is open.", `${EPOCH_MS}; 0 (not resolved yet) is stored as null`),
    category: field("category", "TagCount category."),
    okind_name: AGENT_GROUPS.okind_name!,
    onode: AGENT_GROUPS.onode!,
    snapshot: field("snapshot", "Snapshot at the time of the event; only for basic server events."),
    status: field("status", "Event state (allowed values not documented).", { conversion: LOWERED }),
    extra: {
      text: "Fields with no column, under their original key: process and triggerId (present in responses, meaning not documented), and any new field.",
    },
  },
};

export const eventDocs: DocGroup = { title: "Events", tables: { event_settings: eventSettings, events } };
