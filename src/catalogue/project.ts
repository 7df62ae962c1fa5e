// Project-level snapshot operations and the agents-in-a-window / event operations (project token + pcode).

import { recordOf } from "../kernel/declare.ts";
import { eventHistoryEnvelope, eventRecord, eventSettingsEnvelope, explodeSettings, settingsProductRecord } from "../schemas/events.ts";
import { agentsEnvelope, agentsWindowEnvelope, agentsWindowRequest, projectDetailEnvelope, spotEnvelope } from "../schemas/project.ts";
import { agentColumns } from "./dictionary/account.ts";
import { agentInventoryColumns } from "./dictionary/project.ts";
import { DAY, defineOperation } from "./types.ts";

const common = { method: "GET", token: "project", sendsPcode: true, format: "json", inSpec: true } as const;

export const projectOperations = [
  defineOperation({
    ...common,
    area: "project",
    id: "project.detail",
    summary: "project detail (APM and server product shapes)",
    path: "/open/api/json/project",
    windowLimitMs: null,
    envelope: projectDetailEnvelope,
    stream: { kind: "dimension", table: "project_details", enabledByDefault: true },
  }),
  defineOperation({
    ...common,
    area: "project",
    id: "project.agents",
    summary: "basic agent list (no oid)",
    path: "/open/json/agents",
    windowLimitMs: null,
    envelope: agentsEnvelope,
    records: { at: "data", schema: recordOf(agentColumns) },
    stream: { kind: "dimension", table: "agents", enabledByDefault: true },
  }),
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
    area: "project",
    id: "project.spot",
    summary: "current spot values (all strings)",
    path: "/open/api/json/spot",
    windowLimitMs: null,
    envelope: spotEnvelope,
    stream: { kind: "snapshot", table: "spot_values", enabledByDefault: true },
  }),
  defineOperation({
    ...common,
    area: "project",
    id: "project.agents_window",
    summary: "agents active in a time window",
    // Method and path are not in the spec; default from docs/api-notes.md, overridable in config.
    method: "POST",
    path: "/open/api/v2/agent/list",
    body: ["stime", "etime"],
    overridable: true,
    windowLimitMs: DAY,
    envelope: agentsWindowEnvelope,
    records: { at: "data", schema: recordOf(agentInventoryColumns) },
    requestSchema: agentsWindowRequest,
    stream: { kind: "points", table: "agent_inventory", enabledByDefault: true, grainMs: DAY },
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
