// Account-level dimensions: projects, groups and members (account API token), and the project-level
// project detail and agent list. The columns are declared once, with the records' fields and their
// meanings, in catalogue/dictionary/account.ts.
import { pgTable, primaryKey } from "drizzle-orm/pg-core";
import {
  agentColumns,
  groupColumns,
  groupMemberColumns,
  groupProjectColumns,
  projectColumns,
  projectDetailColumns,
  projectMemberColumns,
} from "../../catalogue/dictionary/account.ts";
import { tableOf } from "../../kernel/declare.ts";
import { i64 } from "../../kernel/sql-types.ts";
import { dimensionColumns } from "../../kernel/tables.ts";

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

/**
 * Project detail (project op): two shapes (APM and server products); unknown fields go to extra.
 * pcode is the shared column (the project asked for), not the record's projectCode.
 */
export const projectDetails = pgTable("project_details", {
  pcode: i64().primaryKey(),
  ...tableOf(projectDetailColumns),
  ...dimensionColumns(),
});

/** Basic agent list; pcode is the shared column (the project asked for). */
export const agents = pgTable("agents", { pcode: i64().notNull(), ...tableOf(agentColumns), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.pcode, t.oname] }),
]);
