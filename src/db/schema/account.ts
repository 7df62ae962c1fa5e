// Account-level dimensions: projects, groups and members (account API token).
import { boolean, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { dimensionColumns, f64, i64, ts } from "./columns.ts";

/** Project list entry; `projectCode` maps to pcode. `apiToken` is never stored (masked, still a secret). */
export const projects = pgTable("projects", {
  pcode: i64().primaryKey(),
  project_name: text(),
  // "2018-10-19T07:17:03.774": ISO without zone, read as UTC.
  create_time: ts(),
  status: text(),
  product_type: text(),
  platform: text(),
  // In the docs' schema, absent from its example.
  group_name: text(),
  last_updated_time: ts(),
  gateway_name: text(),
  ...dimensionColumns(),
});

const memberColumns = () => ({
  email: text().notNull(),
  name: text(),
  desc: text(),
  sms: text(),
});

export const projectMembers = pgTable("project_members", { pcode: i64().notNull(), ...memberColumns(), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.pcode, t.email] }),
]);

export const groups = pgTable("groups", {
  group_key: text().primaryKey(),
  group_name: text(),
  description: text(),
  ...dimensionColumns(),
});

export const groupMembers = pgTable("group_members", { group_key: text().notNull(), ...memberColumns(), ...dimensionColumns() }, (t) => [
  primaryKey({ columns: [t.group_key, t.email] }),
]);

/** Group project meta information; `projectCode` maps to pcode. */
export const groupProjects = pgTable(
  "group_projects",
  {
    group_key: text().notNull(),
    pcode: i64().notNull(),
    name: text(),
    status: text(),
    product_type: text(),
    platform: text(),
    gateway_name: text(),
    ...dimensionColumns(),
  },
  (t) => [primaryKey({ columns: [t.group_key, t.pcode] })],
);

/** Project detail (project op): two shapes (APM and server products); unknown fields go to extra. */
export const projectDetails = pgTable("project_details", {
  pcode: i64().primaryKey(),
  name: text(),
  platform: text(),
  // "Tue Sep 18 08:34:27 GMT 2018": Java Date text, parsed by the mapper.
  create_time: ts(),
  last_updated_time: ts(),
  gateway_name: text(),
  status: text(),
  product_type: text(),
  // Server-product shape: pname instead of projectCode, plus its server list in `values`.
  pname: text(),
  timezone: f64(),
  region_name: text(),
  values: jsonb(),
  ...dimensionColumns(),
});

/** Basic agent list. */
export const agents = pgTable(
  "agents",
  { pcode: i64().notNull(), oname: text().notNull(), host_ip: text(), active: boolean(), ...dimensionColumns() },
  (t) => [primaryKey({ columns: [t.pcode, t.oname] })],
);
