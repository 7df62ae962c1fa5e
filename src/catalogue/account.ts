// Account-level operations: account API token, no project code (spec "Project, group and member operations").
import { groupProjectRecord, groupRecord, listEnvelope, memberRecord, projectRecord, projectsEnvelope } from "../schemas/account.ts";
import { defineOperation } from "./types.ts";

const common = {
  area: "account",
  method: "GET",
  token: "account",
  sendsPcode: false,
  format: "json",
  windowLimitMs: null,
  inSpec: true,
} as const;

export const accountOperations = [
  defineOperation({
    ...common,
    id: "account.projects",
    summary: "projects of the account",
    path: "/open/api/json/projects",
    envelope: projectsEnvelope,
    records: { at: "data", schema: projectRecord },
    stream: { kind: "dimension", table: "projects", enabledByDefault: true, rename: { project_code: "pcode" } },
  }),
  defineOperation({
    ...common,
    id: "account.project_members",
    summary: "members of one project",
    path: "/open/api/json/project/{projectCode}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: memberRecord },
    stream: { kind: "dimension", table: "project_members", enabledByDefault: true, fanOut: "project" },
  }),
  defineOperation({
    ...common,
    id: "account.groups",
    summary: "groups of the user",
    // The spec names the v2 path; the docs also show /open/api/json/groups (API-NOTES.md): on a
    // 404 the client tries the other and remembers it. Overridable.
    path: "/open/api/v2/json/groups",
    altPaths: ["/open/api/json/groups"],
    overridable: true,
    envelope: listEnvelope,
    records: { at: "data", schema: groupRecord },
    stream: { kind: "dimension", table: "groups", enabledByDefault: true },
  }),
  defineOperation({
    ...common,
    id: "account.group_members",
    summary: "members of one group",
    path: "/open/api/json/group/{groupKey}/members",
    envelope: listEnvelope,
    records: { at: "data", schema: memberRecord },
    stream: { kind: "dimension", table: "group_members", enabledByDefault: true, fanOut: "group" },
  }),
  defineOperation({
    ...common,
    id: "account.group_projects",
    summary: "projects of one group (meta information, no total)",
    path: "/open/api/json/group/{groupKey}/projects",
    envelope: listEnvelope,
    records: { at: "data", schema: groupProjectRecord },
    stream: { kind: "dimension", table: "group_projects", enabledByDefault: true, fanOut: "group", rename: { project_code: "pcode" } },
  }),
] as const;
