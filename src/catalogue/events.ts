// Event settings and event history (project token + pcode): their operations. The columns, tables
// and records are declared in catalogue/dictionary/events.ts, src/schemas/events.ts and
// src/db/schema/project.ts.
import { eventHistoryEnvelope, eventRecord, eventSettingsEnvelope, explodeSettings, settingsProductRecord } from "../schemas/events.ts";
import { DAY, defineOperation } from "./types.ts";

const common = { method: "GET", token: "project", sendsPcode: true, format: "json", inSpec: true } as const;

export const eventOperations = [
  defineOperation({
    ...common,
    area: "events",
    id: "project.event_settings",
    summary: "event settings (bulk JSON of the settings screen)",
    path: "/open/api/json/event/v2/settings",
    windowLimitMs: null,
    envelope: eventSettingsEnvelope,
    records: { at: null, schema: settingsProductRecord, explode: explodeSettings },
    stream: { kind: "dimension", table: "event_settings", enabledByDefault: true },
  }),
  defineOperation({
    ...common,
    area: "events",
    id: "project.event_history",
    summary: "event history (bare array)",
    path: "/open/api/json/event/history",
    // The parameter table says `oid`, the sample request `oids`: both are accepted as params. The
    // engine reads all agents' events and sends neither.
    query: ["stime", "etime", "progress", "oid", "oids", "okinds", "onodes"],
    // Not limited by the spec; one day keeps pages small and matches the other window operations.
    windowLimitMs: DAY,
    envelope: eventHistoryEnvelope,
    records: { at: null, schema: eventRecord },
    stream: {
      kind: "points",
      table: "events",
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
