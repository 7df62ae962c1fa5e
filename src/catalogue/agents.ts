// The agents family, in one place: the basic agent list and the agents active in a time window
// (project token + pcode; spec "Agent (active in a time window)"). For each stream: its columns
// (declared once: src/kernel/declare.ts), its table, its dictionary entry, its envelope and its
// operation.
import { getTableName } from "drizzle-orm";
import { boolean, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, flag, hash, integerOf, local, named, of, recordOf, tableOf, text } from "../kernel/declare.ts";
import { type DocGroup, HASH32 } from "../kernel/docs.ts";
import { bool, int, int32 } from "../kernel/primitives.ts";
import { opt } from "../kernel/record.ts";
import { i64, ts } from "../kernel/sql-types.ts";
import { dimensionColumns, docEntry, factColumns } from "../kernel/tables.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { DAY, defineOperation } from "./types.ts";

// ---- Columns ----

/** Basic agent list; pcode is the shared column (the project asked for). */
export const agentColumns = columns({
  oname: of(z.string(), () => textColumn().notNull(), "Agent name."),
  host_ip: text("Host IP address of the agent."),
  active: of(opt(bool), boolean, "Agent state: true while the agent is active."),
});

/** The agent groups of an agent; the spec gives these meanings for the same fields of event records. */
export const agentGroupColumns = columns({
  okind: hash("Identifier of the per-kind agent group.").optional,
  okindName: text("Name of the per-kind agent group."),
  onode: hash("Identifier of the per-server agent group.").optional,
  onodeName: text("Name of the per-server agent group."),
});

/**
 * Agents active in a window, one row per agent. pcode and first_seen_at (shared meanings) are the
 * table's; last_seen_at, declared here for its meaning, follows first_seen_at in the table.
 */
export const agentInventoryColumns = columns({
  // Required and not null: the table's key with pcode.
  oid: of(int32, () => i64().notNull(), { text: "Agent identifier.", conversion: HASH32 }),
  oname: text("Agent name."),
  alias: text(named("Alias of the agent.")),
  initial: text(named("Initial of the agent.")),
  otype: text(named('Agent type, e.g. "database".')),
  // "0" as a string in samples; kept as text like the spec says.
  subtype: of(
    opt(z.union([z.string(), z.number()]).transform(String)),
    textColumn,
    named("Agent subtype.", { conversion: 'kept as text (the sample sends "0")' }),
  ),
  active: flag("Agent state: true while the agent is active."),
  ...agentGroupColumns,
  ip: text(named("IP address of the agent.")),
  "agent.version": text(named("Agent version.", { conversion: "dotted key agent.version -> agent_version" })),
  cpuCores: integerOf(named("CPU cores of the agent's host.", { unit: "count" })),
  // The window whose answer last listed the agent: the request's input.
  window_start: local(ts, "Start of the window whose answer last listed the agent (the request's stime)."),
  window_end: local(ts, "End (exclusive) of the window whose answer last listed the agent (the request's etime)."),
  last_seen_at: local(
    () => ts().notNull().defaultNow(),
    "When apm-sync last stored a window answer that listed the agent (its clock, not the window's).",
  ),
});

// ---- Tables ----

/** Basic agent list (a dimension); pcode is the shared column (the project asked for). */
export const agents = pgTable("agents", { pcode: i64().notNull(), ...tableOf(agentColumns), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.pcode, t.oname] }),
]);

/**
 * Agents active in a time window: one row per agent, refreshed by every window that lists it.
 * first_seen_at (a shared meaning) keeps its place between the window and last_seen_at: the
 * columns stay in the order the table was made with.
 */
const { last_seen_at, ...agentInWindow } = tableOf(agentInventoryColumns);
export const agentInventory = pgTable(
  "agent_inventory",
  { pcode: i64().notNull(), ...agentInWindow, first_seen_at: ts().notNull().defaultNow(), last_seen_at, ...factColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.oid] })],
);

// ---- The dictionary's entries ----

export const agentDocs: DocGroup = {
  title: "Agents",
  tables: Object.fromEntries([
    docEntry(agents, `The basic agent list of each project (no agent id: ${getTableName(agentInventory)} has it).`, agentColumns),
    docEntry(
      agentInventory,
      "Agents active in a time window, one row per agent (oid): each window that lists an agent refreshes its row, so " +
        "the row holds the agent as the latest such answer showed it.",
      agentInventoryColumns,
    ),
  ]),
};

// ---- Envelopes and request ----

const agentsEnvelope = objectEnvelope(z.looseObject({ data: recordsArray }));

const agentsWindowEnvelope = objectEnvelope(z.looseObject({ stime: opt(int), etime: opt(int), timestamp: opt(int), data: recordsArray }));

// epoch ms, or the text forms yyyyMMddHHmmss, yyyyMMddHHmm, MMddHHmmss, MMddHHmm.
const agentListTime = z.union([z.number().int().nonnegative(), z.string().regex(/^(\d{8}|\d{10}|\d{12}|\d{14}|\d{13})$/)]);
const agentsWindowRequest = z.strictObject({ stime: agentListTime, etime: agentListTime });

// ---- Operations ----

const common = { area: "project", method: "GET", token: "project", sendsPcode: true, format: "json", inSpec: true } as const;

export const agentOperations = [
  defineOperation({
    ...common,
    id: "project.agents",
    summary: "basic agent list (no oid)",
    path: "/open/json/agents",
    windowLimitMs: null,
    envelope: agentsEnvelope,
    records: { at: "data", schema: recordOf(agentColumns) },
    stream: { kind: "dimension", table: getTableName(agents), enabledByDefault: true },
  }),
  defineOperation({
    ...common,
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
    stream: { kind: "points", table: getTableName(agentInventory), enabledByDefault: true, grainMs: DAY },
  }),
] as const;
