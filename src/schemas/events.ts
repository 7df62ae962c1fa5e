// Event history (bare array of event records) and event settings (bare array of products whose
// `events` is an array of objects keyed by event type). Spec "Event settings" / "Event record".
import { z } from "zod";
import { eventColumns, eventSettingColumns, settingEntryColumns, settingProductColumns } from "../catalogue/dictionary/events.ts";
import { shapeOf } from "../kernel/declare.ts";
import { pcode } from "../kernel/primitives.ts";
import { opt, recordSchema, snakeCase } from "../kernel/record.ts";
import { bareArray } from "./envelope.ts";

// The record's own pcode ("7" in one record, 7 in the next) is read, then replaced by the project
// asked for (engine/rows.ts): its column is the table's shared pcode, not one of the declared.
export const eventRecord = recordSchema({ pcode, ...shapeOf(eventColumns) });
export const eventHistoryEnvelope = bareArray;

// Not row-shaped: an event_settings row is one entry of a product's `events` (its type the key it is
// listed under), with the product's fields. Each entry type's fields, as it spells them
// (COMPOSITE_METRICS in snake_case), are read as their columns declare (catalogue/dictionary/events.ts);
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

export const settingsProductRecord = recordSchema({ ...shapeOf(settingProductColumns), events: z.array(byType) });
export const eventSettingsEnvelope = bareArray;

/** Columns of an event_settings row: the union of every entry type's fields, `id` as `setting_id`. */
export const SETTING_COLUMNS = [...Object.keys(eventSettingColumns).map(snakeCase), "extra"];

type Entry = { id: string; extra: Record<string, unknown> } & Record<string, unknown>;
type Product = z.output<typeof settingsProductRecord>;

/** One row per setting entry, every row with the same columns (null where a type lacks one). */
export function explodeSettings(product: Product): Record<string, unknown>[] {
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
