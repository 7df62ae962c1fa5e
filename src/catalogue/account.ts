// Account-level operations: account API token, no project code (spec "Project, group and member operations").

import { recordOf, renamesOf } from "../kernel/declare.ts";
import { listEnvelope, projectRecord, projectsEnvelope } from "../schemas/account.ts";
import { groupColumns, groupProjectColumns, memberColumns, projectColumns } from "./dictionary/account.ts";
import { defineOperation, type ParentSpec } from "./types.ts";

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
    stream: { ...dimension, table: "projects", rename: renamesOf(projectColumns) },
  }),
  defineOperation({
    ...common,
    id: "account.project_members",
    summary: "members of one project",
    path: "/open/api/json/project/{projectCode}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(memberColumns) },
    stream: { ...dimension, table: "project_members", parent: perProject },
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
    stream: { ...dimension, table: "groups" },
  }),
  defineOperation({
    ...common,
    id: "account.group_members",
    summary: "members of one group",
    path: "/open/api/json/group/{groupKey}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(memberColumns) },
    stream: { ...dimension, table: "group_members", parent: perGroup },
  }),
  defineOperation({
    ...common,
    id: "account.group_projects",
    summary: "projects of one group (meta information, no total)",
    path: "/open/api/json/group/{groupKey}/projects",
    envelope: listEnvelope,
    records: { at: "data", schema: recordOf(groupProjectColumns) },
    stream: { ...dimension, table: "group_projects", parent: perGroup, rename: renamesOf(groupProjectColumns) },
  }),
] as const;
