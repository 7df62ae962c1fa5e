// Projects, members, groups (account token) and the project-level dimensions: project detail and
// the basic agent list. Each table's columns are declared once (declare.ts), from which the record
// schemas (src/schemas/account.ts, src/schemas/project.ts), the tables (src/db/schema/account.ts)
// and these dictionary entries come. Spec "Resources and their fields": Project, Project detail,
// Member, Group.
import { boolean, jsonb, type PgColumnBuilderBase, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, docsOf, local, of, says, text } from "../../kernel/declare.ts";
import { ANY_TIME, type DocGroup, JSON_KEPT, LOWERED, type TableDoc, UNDOCUMENTED } from "../../kernel/docs.ts";
import { anyTime, bool, isoUtc, lower, num, pcode } from "../../kernel/primitives.ts";
import { opt } from "../../kernel/record.ts";
import { f64, i64, ts } from "../../kernel/sql-types.ts";

const PROJECT_STATUS = "Project status: pending, trial, subscribe, close_pending, limited, closed or trial_limited";
const PATH = "the request's path parameter";

/** Status, lower-cased: the API may capitalise it ("Subscribe"). */
const status = (reading: string) => of(opt(lower), textColumn, says(reading, { conversion: LOWERED }));
/** A time sent as epoch ms, ISO text or Java date text ("Tue Sep 18 08:34:27 GMT 2018"). */
const anyTimeOf = (reading: string) => of(opt(anyTime), ts, says(reading, { conversion: ANY_TIME }));
/** The record's projectCode, stored as pcode (the streams rename it: renamesOf). */
const projectCode = <B extends PgColumnBuilderBase>(pg: () => B) =>
  of(pcode, pg, says("Project code.", { conversion: "bigint (codes beyond 2^31 exist)" })).storedAs("pcode");

/** Project list entry. Its apiToken (masked, still a secret) is validated but has no column (src/schemas/account.ts). */
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
  status: status(`${PROJECT_STATUS}.`),
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
  status: status(`${PROJECT_STATUS} (the list may capitalise it).`),
  productType: text("Product type."),
  platform: text("Product platform."),
  gatewayName: text("Data server region."),
});

/**
 * Project detail, two shapes (APM and server products): the fields of both, each optional. Not
 * declared here: pcode (the shared column: the project asked for), the record's projectCode (no
 * column: kept in extra) and the zod of `values` (src/schemas/project.ts).
 */
export const projectDetailColumns = columns({
  name: text("Project name."),
  platform: text("Application product platform."),
  // Java Date text ("Tue Sep 18 08:34:27 GMT 2018"), zone word from the server.
  createTime: anyTimeOf("Creation date (documented as Java date text)."),
  lastUpdatedTime: anyTimeOf("Modification date (documented as Java date text)."),
  gatewayName: text("Data server region."),
  status: status(`${PROJECT_STATUS}.`),
  productType: text("Application product type."),
  // Server-product shape: pname instead of projectCode, plus its server list in `values`.
  pname: text(`Project name of a server product (${UNDOCUMENTED} in the spec; the docs' server sample).`),
  timezone: of(opt(num), f64, says(`Time zone of a server product (${UNDOCUMENTED}; the docs' sample has 9).`, { unit: UNDOCUMENTED })),
  regionName: text(`Region of a server product (${UNDOCUMENTED} in the spec).`),
  // The nested server records are read by src/schemas/project.ts (serverRecord), which imports this file.
  values: local(jsonb, {
    field: "values",
    text: "Server products: the server list (values.servers: oid, oname, ip, OS, CPU, memory, ...).",
    conversion: JSON_KEPT,
  }),
});

/** Basic agent list; pcode is the shared column (the project asked for). */
export const agentColumns = columns({
  oname: of(z.string(), () => textColumn().notNull(), "Agent name."),
  host_ip: text("Host IP address of the agent."),
  active: of(opt(bool), boolean, "Agent state: true while the agent is active."),
});

const tables: Record<string, TableDoc> = {
  projects: {
    description: "The project list of the account. The project API token of each entry (apiToken, masked) is never stored.",
    columns: docsOf(projectColumns),
  },
  project_members: {
    description: "Members of each project (one request per project code of the project list).",
    columns: docsOf(projectMemberColumns),
  },
  groups: {
    description: "Groups of the user the account token belongs to.",
    columns: docsOf(groupColumns),
  },
  group_members: {
    description: "Members of each group (one request per group key).",
    columns: docsOf(groupMemberColumns),
  },
  group_projects: {
    description: "Projects of each group (meta information; one request per group key).",
    columns: docsOf(groupProjectColumns),
  },
  project_details: {
    description:
      "Project detail of each project. Two shapes: APM products (name, platform, ...) and server products (pname, " +
      "timezone, regionName, values; not in the spec, from the service's docs).",
    columns: {
      ...docsOf(projectDetailColumns),
      extra: {
        text: "Fields with no column, under their original key; the record's projectCode is kept here as project_code (pcode is the project asked for).",
      },
    },
  },
  agents: {
    description: "The basic agent list of each project (no agent id: agent_inventory has it).",
    columns: docsOf(agentColumns),
  },
};

export const accountDocs: DocGroup = { title: "Projects, members, groups and agents", tables };
