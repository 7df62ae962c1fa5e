// The account family, in one place: projects, members and groups (account API token, no project
// code; spec "Project, group and member operations", "Resources and their fields": Project, Member,
// Group). For each stream: its columns (the records' fields, their SQL types and meanings, declared
// once: src/kernel/declare.ts), its table, its dictionary entry, its envelope and its operation. All
// are dimensions: complete lists, soft-deleted when a row goes missing.
import { getTableName } from "drizzle-orm";
import { type PgColumnBuilderBase, pgTable, primaryKey, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, local, of, recordOf, renamesOf, says, shapeOf, tableOf, text } from "../kernel/declare.ts";
import { ANY_TIME, type DocGroup, LOWERED, UNDOCUMENTED } from "../kernel/docs.ts";
import { anyTime, isoUtc, lower, pcode } from "../kernel/primitives.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { i64, ts } from "../kernel/sql-types.ts";
import { dimensionColumns, docEntry } from "../kernel/tables.ts";
import { objectEnvelope, optCount, recordsArray } from "../schemas/envelope.ts";
import { defineOperation, type ParentSpec } from "./types.ts";

// ---- Columns ----

export const PROJECT_STATUS = "Project status: pending, trial, subscribe, close_pending, limited, closed or trial_limited";
const PATH = "the request's path parameter";

/** Status, lower-cased: the API may capitalise it ("Subscribe"). */
export const projectStatus = (reading: string) => of(opt(lower), textColumn, says(reading, { conversion: LOWERED }));
/** A time sent as epoch ms, ISO text or Java date text ("Tue Sep 18 08:34:27 GMT 2018"). */
export const anyTimeOf = (reading: string) => of(opt(anyTime), ts, says(reading, { conversion: ANY_TIME }));
/** The record's projectCode, stored as pcode (the streams rename it: renamesOf). */
const projectCode = <B extends PgColumnBuilderBase>(pg: () => B) =>
  of(pcode, pg, says("Project code.", { conversion: "bigint (codes beyond 2^31 exist)" })).storedAs("pcode");

/** Project list entry. Its apiToken (masked, still a secret) is validated but has no column (projectRecord). */
export const projectColumns = columns({
  projectCode: projectCode(() => i64().primaryKey()),
  projectName: text("Project name."),
  // Old docs use a space instead of the T.
  createTime: of(
    opt(isoUtc),
    ts,
    says("Creation time.", {
      conversion: 'ISO 8601 date-time without zone ("2018-10-19T07:17:03.774"), read as UTC (the zone is not documented)',
    }),
  ),
  status: projectStatus(`${PROJECT_STATUS}.`),
  productType: text("Product type."),
  platform: text("Product platform."),
  // In the docs' schema, absent from its example.
  groupName: text(`Group name (${UNDOCUMENTED}: listed by the docs' schema of the project list, not by the spec).`),
  lastUpdatedTime: anyTimeOf("Modification date (the spec documents it for project detail, not for the list)."),
  gatewayName: text("Data server region (the spec documents it for project detail, not for the list)."),
});

/** A member of a project or a group. */
export const memberColumns = columns({
  email: of(z.string(), () => textColumn().notNull(), "E-mail address of the member."),
  name: text("Name of the member."),
  desc: text(`Description of the member (${UNDOCUMENTED}: the spec types it as a string only).`),
  sms: text("Phone number of the member, as sent (may be masked)."),
});

export const projectMemberColumns = columns({
  pcode: local(() => i64().notNull(), {
    text: "The project the member list was asked for (path parameter projectCode).",
    conversion: PATH,
  }),
  ...memberColumns,
});

export const groupColumns = columns({
  groupKey: of(
    z.string(),
    () => textColumn().primaryKey(),
    "Group identifier; the spec says it is masked in the output, and a masked key cannot be asked for members.",
  ),
  groupName: text("Group name."),
  description: text("Description of the group."),
});

export const groupMemberColumns = columns({
  group_key: local(() => textColumn().notNull(), {
    text: "The group the member list was asked for (path parameter groupKey).",
    conversion: PATH,
  }),
  ...memberColumns,
});

/** Group project meta information. */
export const groupProjectColumns = columns({
  group_key: local(() => textColumn().notNull(), {
    text: "The group the project list was asked for (path parameter groupKey).",
    conversion: PATH,
  }),
  projectCode: projectCode(() => i64().notNull()),
  name: text("Project name."),
  status: projectStatus(`${PROJECT_STATUS} (the list may capitalise it).`),
  productType: text("Product type."),
  platform: text("Product platform."),
  gatewayName: text("Data server region."),
});

// ---- Tables: dimensions ----

/** Project list entry; `projectCode` maps to pcode. `apiToken` is never stored (masked, still a secret). */
export const projects = pgTable("projects", { ...tableOf(projectColumns), ...dimensionColumns() });

export const projectMembers = pgTable("project_members", { ...tableOf(projectMemberColumns), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.pcode, t.email] }),
]);

export const groups = pgTable("groups", { ...tableOf(groupColumns), ...dimensionColumns() });

export const groupMembers = pgTable("group_members", { ...tableOf(groupMemberColumns), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.group_key, t.email] }),
]);

/** Group project meta information; `projectCode` maps to pcode. */
export const groupProjects = pgTable("group_projects", { ...tableOf(groupProjectColumns), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.group_key, t.pcode] }),
]);

// ---- The dictionary's entries ----

export const accountDocs: DocGroup = {
  title: "Projects, members and groups",
  tables: Object.fromEntries([
    docEntry(
      projects,
      "The project list of the account. The project API token of each entry (apiToken, masked) is never stored.",
      projectColumns,
    ),
    docEntry(projectMembers, "Members of each project (one request per project code of the project list).", projectMemberColumns),
    docEntry(groups, "Groups of the user the account token belongs to.", groupColumns),
    docEntry(groupMembers, "Members of each group (one request per group key).", groupMemberColumns),
    docEntry(groupProjects, "Projects of each group (meta information; one request per group key).", groupProjectColumns),
  ]),
};

// ---- Records and envelopes: data + total; group projects has no total ----

const projectRecord = recordSchema(
  {
    ...shapeOf(projectColumns),
    // Masked in the output ("5****R"), and a credential in any case: validated, never stored (no column).
    apiToken: opt(z.string()),
  },
  { drop: ["apiToken"] },
);

const projectsEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, accountEmail: opt(z.string()), total: optCount }));

/** Members of a project or a group: data + total. */
const listEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, total: optCount }));

// ---- Operations ----

const common = {
  area: "account",
  method: "GET",
  token: "account",
  sendsPcode: false,
  format: "json",
  windowLimitMs: null,
  inSpec: true,
} as const;

const dimension = { kind: "dimension", scope: "account", enabledByDefault: true } as const;

/** Fetched once per project of the account's project list (whose keys also say which projects exist). */
export const perProject: ParentSpec = { stream: "account.projects", key: "pcode", param: "projectCode", column: "pcode" };

/** Fetched once per group of the group list; the list masks some keys ("grp****ab12"), which cannot be asked for. */
const perGroup: ParentSpec = {
  stream: "account.groups",
  key: "group_key",
  param: "groupKey",
  column: "group_key",
  skip: { when: (key) => key.includes("*"), why: "masked by the server" },
};

export const accountOperations = [
  defineOperation({
    ...common,
    id: "account.projects",
    summary: "projects of the account",
    path: "/open/api/json/projects",
    envelope: projectsEnvelope,
    records: { at: "data", schema: projectRecord },
    stream: { ...dimension, table: getTableName(projects), rename: renamesOf(projectColumns) },
  }),
  defineOperation({
    ...common,
    id: "account.project_members",
    summary: "members of one project",
    path: "/open/api/json/project/{projectCode}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(memberColumns) },
    stream: { ...dimension, table: getTableName(projectMembers), parent: perProject },
  }),
  defineOperation({
    ...common,
    id: "account.groups",
    summary: "groups of the user",
    // The spec names the v2 path; the docs also show /open/api/json/groups (docs/api-notes.md): on a
    // 404 the client tries the other and remembers it. Overridable.
    path: "/open/api/v2/json/groups",
    altPaths: ["/open/api/json/groups"],
    overridable: true,
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(groupColumns) },
    stream: { ...dimension, table: getTableName(groups) },
  }),
  defineOperation({
    ...common,
    id: "account.group_members",
    summary: "members of one group",
    path: "/open/api/json/group/{groupKey}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(memberColumns) },
    stream: { ...dimension, table: getTableName(groupMembers), parent: perGroup },
  }),
  defineOperation({
    ...common,
    id: "account.group_projects",
    summary: "projects of one group (meta information, no total)",
    path: "/open/api/json/group/{groupKey}/projects",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(groupProjectColumns) },
    stream: { ...dimension, table: getTableName(groupProjects), parent: perGroup, rename: renamesOf(groupProjectColumns) },
  }),
] as const;
