// Event settings: the array-of-objects shape of the docs sample (its `events` is an array of one
// object keyed by event type), not the object its schema describes.
import { mix } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";

/** The settings' own `${field}` reference syntax. */
const ref = (field: string) => "$" + "{" + field + "}";

const id = (w: ProjectWorld, what: string) => `z${mix(w.seed, w.pcode, what).toString(36)}${mix(what, w.pcode).toString(36).slice(0, 4)}`;

function basic(w: ProjectWorld) {
  const entry = (metaId: string, displayName: string, field: string, warn: number, crit: number | null) => ({
    criticalEnabled: crit !== null,
    warningEnabled: true,
    silentPeriod: 300000,
    metaId,
    displayName,
    criticalThreshold: crit === null ? "" : `${field} > ${crit}`,
    warningThreshold: `${field} > ${warn}`,
    message: `${displayName} = ${ref(field)}`,
    version: 2,
    enabled: true,
    repeatDuration: 0,
    id: id(w, metaId),
    conditions: [
      ...(crit === null ? [] : [{ level: 30, rule: `${field} > ${crit}`, enabled: true }]),
      { level: 20, rule: `${field} > ${warn}`, enabled: true },
    ],
    selectCondition: {},
    stateful: false,
    repeatCount: 1,
  });
  return [entry("java004", "Active Transaction", "active_tx_count", 100, null), entry("java002", "Server Memory", "mem", 70, 90)];
}

function metrics(w: ProjectWorld) {
  return [
    {
      eventMessage: `Metrics: tx_count: ${ref("tx_count")}`,
      select: `${ref("oname")} != ''`,
      alertLabel: [],
      rule: `${ref("tx_count")} >= 120`,
      silentSec: 0,
      version: 0,
      enabled: true,
      eventTitle: "Transaction count exceeds 120",
      repeatDuration: 0,
      eventLevel: 30,
      id: id(w, "metrics-1"),
      category: "app_counter",
      conditions: [{ level: 30, rule: `${ref("tx_count")} >= 120`, enabled: true }],
      stateful: true,
      repeatCount: 0,
    },
  ];
}

function composite(w: ProjectWorld) {
  const desc = { widgetType: "EXPERT", supports: [], isExpertEditable: false, pcode: w.pcode };
  return [
    {
      interval_sec: 60,
      query: 'CATEGORY app_counter\nTAGLOAD\nSELECT\nGROUP { timeunit:1m, merge:"tx_count", pk:"oid" }',
      rule: "tx_count > 5",
      event_title: "key oid",
      enabled: false,
      silent_sec: 60,
      event_level: 20,
      id: id(w, "composite-1"),
      time_trim: 5000,
      event_message: `tx_count : ${ref("tx_count")}`,
      time_period: 60000,
      stateful: true,
      // A JSON document carried as a string (docs sample).
      desc: JSON.stringify(desc),
    },
  ];
}

function transaction(w: ProjectWorld) {
  return [
    {
      silentTime: "60000",
      appCtx: [],
      excludeStatus: ["404"],
      errorClass: [],
      errorMessage: [],
      excludeErrorMessage: [],
      enabled: true,
      url: ["**/payment/**"],
      excludeUrl: ["*health*"],
      excludeErrorClass: [],
      eventTitle: "Transaction event",
      eventLevel: 20,
      limit: 1,
      conditionValue: 0,
      conditionType: "none",
      id: id(w, "transaction-1"),
      resultType: "per-agent",
      excludeAppCtx: [],
      status: [],
    },
  ];
}

export function eventSettings(w: ProjectWorld): unknown {
  return [
    {
      productType: "APM",
      platform: "JAVA",
      events: [{ BASIC: basic(w), METRICS: metrics(w), COMPOSITE_METRICS: composite(w), TRANSACTION: transaction(w) }],
    },
  ];
}
