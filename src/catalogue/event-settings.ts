// The event settings family, in one place (project token + pcode; spec "Event settings"): the bulk
// settings download, a bare array of products whose `events` is an array of objects keyed by event
// type, one row per setting entry. Its columns (declared once: src/kernel/declare.ts), its table,
// its dictionary entry, the parser of the entries and its operation. The dictionary's group is
// events.ts's.
import { getTableName } from "drizzle-orm";
import { jsonb, type PgColumnBuilderBase, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { Column, columns, flag, integerOf, jsonList, local, measure, named, of, says, shapeOf, tableOf, text } from "../kernel/declare.ts";
import { JSON_KEPT, UNDOCUMENTED } from "../kernel/docs.ts";
import { bool, int, jsonText } from "../kernel/primitives.ts";
import { opt, recordSchema, snakeCase } from "../kernel/record.ts";
import { i64 } from "../kernel/sql-types.ts";
import { dimensionColumns, docEntry } from "../kernel/tables.ts";
import { bareArray } from "../schemas/envelope.ts";
import { defineOperation } from "./types.ts";

// ---- Columns ----

// Setting entries of four event types share one table; each column says which types carry it.
const B = "BASIC";
const M = "METRICS";
const C = "COMPOSITE_METRICS";
const T = "TRANSACTION";

/** A list or object kept as JSON, what it holds said in the column's words (JSON_KEPT: not documented). */
export const json = <Z extends z.ZodType>(zod: Z, text: string) => of(opt(zod), jsonb, says(text, { conversion: "kept as JSON" }));

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

// ---- Table: a dimension ----

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

// ---- The dictionary's entry ----

export const eventSettingsDoc = docEntry(
  eventSettings,
  "Event settings of each project, one row per setting entry of the bulk settings download (the settings screen's " +
    "JSON): the union of the fields of the BASIC, METRICS, COMPOSITE_METRICS and TRANSACTION entries, null where an " +
    "entry type has no such field. List and object fields stay JSON: their element shapes are not documented.",
  eventSettingColumns,
);

// ---- Records ----

// Not row-shaped: an event_settings row is one entry of a product's `events` (its type the key it is
// listed under), with the product's fields. Each entry type's fields, as it spells them
// (COMPOSITE_METRICS in snake_case), are read as their columns declare (settingEntryColumns);
// any other field of an entry goes to its `extra`.
const ENTRY_FIELDS = {
  BASIC: [
    "criticalEnabled",
    "warningEnabled",
    "silentPeriod",
    "metaId",
    "displayName",
    "criticalThreshold",
    "warningThreshold",
    "message",
    "version",
    "enabled",
    "repeatDuration",
    "conditions",
    "selectCondition",
    "stateful",
    "repeatCount",
  ],
  METRICS: [
    "eventMessage",
    "select",
    "alertLabel",
    "rule",
    "silentSec",
    "version",
    "enabled",
    "eventTitle",
    "repeatDuration",
    "eventLevel",
    "category",
    "conditions",
    "stateful",
    "repeatCount",
  ],
  COMPOSITE_METRICS: [
    "interval_sec",
    "query",
    "rule",
    "event_title",
    "enabled",
    "silent_sec",
    "event_level",
    "time_trim",
    "event_message",
    "time_period",
    "stateful",
    "desc",
  ],
  TRANSACTION: [
    "silentTime",
    "appCtx",
    "excludeStatus",
    "errorClass",
    "errorMessage",
    "excludeErrorMessage",
    "enabled",
    "url",
    "excludeUrl",
    "excludeErrorClass",
    "eventTitle",
    "eventLevel",
    "limit",
    "conditionValue",
    "conditionType",
    "resultType",
    "excludeAppCtx",
    "status",
  ],
} as const;

const entryZod = new Map(Object.entries(settingEntryColumns).map(([key, column]) => [snakeCase(key), column.zod as z.ZodType]));

/** The record schema of one entry type: its `id` (the setting_id column) and its fields. */
function entryRecord(fields: readonly string[]) {
  const zodOf = (field: string) => {
    const zod = entryZod.get(snakeCase(field));
    if (zod === undefined) throw new Error(`event setting field ${field} has no column`);
    return zod;
  };
  return recordSchema({ id: z.string(), ...Object.fromEntries(fields.map((field) => [field, zodOf(field)])) });
}

/** Any other event type: only the id is known, the rest goes to `extra`. */
const genericEntry = entryRecord([]);

// The docs' schema says `Transaction`, the example `TRANSACTION`: type keys are upper-cased.
const upperKeys = (v: unknown) =>
  v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toUpperCase(), x])) : v;
const byType = z.preprocess(
  upperKeys,
  z
    .object({
      BASIC: opt(z.array(entryRecord(ENTRY_FIELDS.BASIC))),
      METRICS: opt(z.array(entryRecord(ENTRY_FIELDS.METRICS))),
      COMPOSITE_METRICS: opt(z.array(entryRecord(ENTRY_FIELDS.COMPOSITE_METRICS))),
      TRANSACTION: opt(z.array(entryRecord(ENTRY_FIELDS.TRANSACTION))),
    })
    .catchall(z.array(genericEntry)),
);

const settingsProductRecord = recordSchema({ ...shapeOf(settingProductColumns), events: z.array(byType) });

/** Columns of an event_settings row: the union of every entry type's fields, `id` as `setting_id`. */
export const SETTING_COLUMNS = [...Object.keys(eventSettingColumns).map(snakeCase), "extra"];

type Entry = { id: string; extra: Record<string, unknown> } & Record<string, unknown>;
type Product = z.output<typeof settingsProductRecord>;

/** One row per setting entry, every row with the same columns (null where a type lacks one). */
function explodeSettings(product: Product): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const group of product.events) {
    for (const [type, entries] of Object.entries(group)) {
      for (const entry of (entries ?? []) as Entry[]) {
        const row: Record<string, unknown> = Object.fromEntries(SETTING_COLUMNS.map((c) => [c, null]));
        const { id, extra, ...fields } = entry;
        Object.assign(row, fields, {
          event_type: type,
          setting_id: id,
          product_type: product.product_type,
          platform: product.platform,
          // Unknown product-level fields ride along under one key instead of being dropped.
          extra: Object.keys(product.extra).length > 0 ? { ...extra, $product: product.extra } : extra,
        });
        rows.push(row);
      }
    }
  }
  return rows;
}

// ---- Operation ----

/** What the event operations share: project token and code, JSON, in the spec. */
export const EVENT_COMMON = {
  area: "events",
  method: "GET",
  token: "project",
  sendsPcode: true,
  format: "json",
  inSpec: true,
} as const;

export const eventSettingsOperation = defineOperation({
  ...EVENT_COMMON,
  id: "project.event_settings",
  summary: "event settings (bulk JSON of the settings screen)",
  path: "/open/api/json/event/v2/settings",
  windowLimitMs: null,
  envelope: bareArray,
  records: { at: null, schema: settingsProductRecord, explode: explodeSettings },
  stream: { kind: "dimension", table: getTableName(eventSettings), enabledByDefault: true },
});
