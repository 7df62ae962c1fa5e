// Event history (bare array of event records) and event settings (bare array of products whose
// `events` is an array of objects keyed by event type). Spec "Event settings" / "Event record".
import { z } from "zod";
import { bareArray } from "./envelope.ts";
import { bool, epochMs, epochMsOrZero, ident, int, int32, jsonText, lower, num, pcode } from "./primitives.ts";
import { opt, outputKeys, recordSchema } from "./record.ts";

const str = z.string();

// `process` and `triggerId` are in responses with no documented meaning: they land in `extra`.
export const eventShape = {
  id: int,
  uuid: opt(ident), // documented as integer, sent as 32 hex digits
  pcode, // "7" in one record, 7 in the next
  oid: opt(int32),
  oname: opt(str),
  okind: opt(int32),
  okindName: opt(str),
  onode: opt(int32),
  onodeName: opt(str),
  eventTime: epochMs,
  updateTime: opt(epochMs),
  offTime: opt(epochMsOrZero), // 0 until the event is resolved
  title: opt(str),
  message: opt(str),
  metricName: opt(str),
  metricValue: opt(num), // a string ("99.73802")
  metricThreshold: opt(num), // a string ("90")
  level: opt(lower), // "Critical"
  status: opt(lower), // "ON"
  displayTag: opt(str),
  disabled: opt(bool),
  stateful: opt(bool),
  escalation: opt(bool),
  tagCount: opt(bool),
  systemEvent: opt(bool),
  category: opt(str),
  product: opt(str),
  ackCount: opt(int),
  acknowledges: opt(z.array(z.unknown())),
  snapshot: opt(str),
};
export const eventRecord = recordSchema(eventShape);
export const eventHistoryEnvelope = bareArray;

const condition = z.looseObject({ level: opt(int), rule: opt(str), enabled: opt(bool) });
const conditions = opt(z.array(condition));
const strings = opt(z.array(z.unknown()));

const basicShape = {
  id: str,
  criticalEnabled: opt(bool),
  warningEnabled: opt(bool),
  silentPeriod: opt(int),
  metaId: opt(str),
  displayName: opt(str),
  criticalThreshold: opt(str),
  warningThreshold: opt(str),
  message: opt(str),
  version: opt(int),
  enabled: opt(bool),
  repeatDuration: opt(int),
  conditions,
  selectCondition: opt(z.record(z.string(), z.unknown())),
  stateful: opt(bool),
  repeatCount: opt(int),
};
const metricsShape = {
  id: str,
  eventMessage: opt(str),
  select: opt(str),
  alertLabel: strings,
  rule: opt(str),
  silentSec: opt(int),
  version: opt(int),
  enabled: opt(bool),
  eventTitle: opt(str),
  repeatDuration: opt(int),
  eventLevel: opt(int), // numeric in the example, string in the docs' schema
  category: opt(str),
  conditions,
  stateful: opt(bool),
  repeatCount: opt(int),
};
const compositeShape = {
  id: str,
  interval_sec: opt(int),
  query: opt(str),
  rule: opt(str),
  event_title: opt(str),
  enabled: opt(bool),
  silent_sec: opt(int),
  event_level: opt(int),
  time_trim: opt(int),
  event_message: opt(str),
  time_period: opt(int),
  stateful: opt(bool),
  desc: opt(jsonText), // a serialised JSON widget definition, kept as text
};
const transactionShape = {
  id: str,
  // A string per the spec; the docs example even has "60000," (YAML slip), which stays text.
  silentTime: opt(z.union([str, z.number()]).transform(String)),
  appCtx: strings,
  excludeStatus: strings,
  errorClass: strings,
  errorMessage: strings,
  excludeErrorMessage: strings,
  enabled: opt(bool),
  url: strings,
  excludeUrl: strings,
  excludeErrorClass: strings,
  eventTitle: opt(str),
  eventLevel: opt(int),
  limit: opt(int),
  conditionValue: opt(num),
  conditionType: opt(str),
  resultType: opt(str),
  excludeAppCtx: strings,
  status: strings,
};

const ENTRY_SHAPES = { BASIC: basicShape, METRICS: metricsShape, COMPOSITE_METRICS: compositeShape, TRANSACTION: transactionShape };
/** Any other event type: only the id is known, the rest goes to `extra`. */
const genericEntry = recordSchema({ id: str });

// The docs' schema says `Transaction`, the example `TRANSACTION`: type keys are upper-cased.
const upperKeys = (v: unknown) =>
  v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toUpperCase(), x])) : v;
const byType = z.preprocess(
  upperKeys,
  z
    .object({
      BASIC: opt(z.array(recordSchema(basicShape))),
      METRICS: opt(z.array(recordSchema(metricsShape))),
      COMPOSITE_METRICS: opt(z.array(recordSchema(compositeShape))),
      TRANSACTION: opt(z.array(recordSchema(transactionShape))),
    })
    .catchall(z.array(genericEntry)),
);

export const settingsProductRecord = recordSchema({ productType: opt(str), platform: opt(str), events: z.array(byType) });
export const eventSettingsEnvelope = bareArray;

/** Columns of an event_settings row: the union of every entry type's fields, `id` as `setting_id`. */
export const SETTING_COLUMNS = [
  "event_type",
  "setting_id",
  "product_type",
  "platform",
  ...new Set(Object.values(ENTRY_SHAPES).flatMap((shape) => outputKeys(shape).filter((k) => k !== "id" && k !== "extra"))),
  "extra",
];

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
