// Projects, members, groups (account token) and the project-level dimensions: project detail and
// the basic agent list. Spec "Resources and their fields": Project, Project detail, Member, Group.
import { ANY_TIME, type ColumnDoc, type DocGroup, field, JSON_KEPT, LOWERED, type TableDoc, UNDOCUMENTED } from "./types.ts";

const PROJECT_STATUS = "Project status: pending, trial, subscribe, close_pending, limited, closed or trial_limited";

const member: Readonly<Record<string, ColumnDoc>> = {
  email: field("email", "E-mail address of the member."),
  name: field("name", "Name of the member."),
  desc: field("desc", `Description of the member (${UNDOCUMENTED}: the spec types it as a string only).`),
  sms: field("sms", "Phone number of the member, as sent (may be masked)."),
};

const pcodeFromList = field("projectCode", "Project code.", { conversion: "bigint (codes beyond 2^31 exist)" });
const PATH = "the request's path parameter";

const tables: Record<string, TableDoc> = {
  projects: {
    description: "The project list of the account. The project API token of each entry (apiToken, masked) is never stored.",
    columns: {
      pcode: pcodeFromList,
      project_name: field("projectName", "Project name."),
      create_time: field("createTime", "Creation time.", {
        conversion: 'ISO 8601 date-time without zone ("2018-10-19T07:17:03.774"), read as UTC (the zone is not documented)',
      }),
      status: field("status", `${PROJECT_STATUS}.`, { conversion: LOWERED }),
      product_type: field("productType", "Product type."),
      platform: field("platform", "Product platform."),
      group_name: field("groupName", `Group name (${UNDOCUMENTED}: listed by the docs' schema of the project list, not by the spec).`),
      last_updated_time: field("lastUpdatedTime", "Modification date (the spec documents it for project detail, not for the list).", {
        conversion: ANY_TIME,
      }),
      gateway_name: field("gatewayName", "Data server region (the spec documents it for project detail, not for the list)."),
    },
  },
  project_members: {
    description: "Members of each project (one request per project code of the project list).",
    columns: { pcode: { text: "The project the member list was asked for (path parameter projectCode).", conversion: PATH }, ...member },
  },
  groups: {
    description: "Groups of the user the account token belongs to.",
    columns: {
      group_key: field(
        "groupKey",
        "Group identifier; the spec says it is masked in the output, and a masked key cannot be asked for members.",
      ),
      group_name: field("groupName", "Group name."),
      description: field("description", "Description of the group."),
    },
  },
  group_members: {
    description: "Members of each group (one request per group key).",
    columns: { group_key: { text: "The group the member list was asked for (path parameter groupKey).", conversion: PATH }, ...member },
  },
  group_projects: {
    description: "Projects of each group (meta information; one request per group key).",
    columns: {
      group_key: { text: "The group the project list was asked for (path parameter groupKey).", conversion: PATH },
      pcode: pcodeFromList,
      name: field("name", "Project name."),
      status: field("status", `${PROJECT_STATUS} (the list may capitalise it).`, { conversion: LOWERED }),
      product_type: field("productType", "Product type."),
      platform: field("platform", "Product platform."),
      gateway_name: field("gatewayName", "Data server region."),
    },
  },
  project_details: {
    description:
      "Project detail of each project. Two shapes: APM products (name, platform, ...) and server products (pname, " +
      "timezone, regionName, values; not in the spec, from the service's docs).",
    columns: {
      name: field("name", "Project name."),
      platform: field("platform", "Application product platform."),
      create_time: field("createTime", "Creation date (documented as Java date text).", { conversion: ANY_TIME }),
      last_updated_time: field("lastUpdatedTime", "Modification date (documented as Java date text).", { conversion: ANY_TIME }),
      gateway_name: field("gatewayName", "Data server region."),
      status: field("status", `${PROJECT_STATUS}.`, { conversion: LOWERED }),
      product_type: field("productType", "Application product type."),
      pname: field("pname", `Project name of a server product (${UNDOCUMENTED} in the spec; the docs' server sample).`),
      timezone: field("timezone", `Time zone of a server product (${UNDOCUMENTED}; the docs' sample has 9).`, { unit: UNDOCUMENTED }),
      region_name: field("regionName", `Region of a server product (${UNDOCUMENTED} in the spec).`),
      extra: {
        text: "Fields with no column, under their original key; the record's projectCode is kept here as project_code (pcode is the project asked for).",
      },
      values: field("values", "Server products: the server list (values.servers: oid, oname, ip, OS, CPU, memory, ...).", {
        conversion: JSON_KEPT,
      }),
    },
  },
  agents: {
    description: "The basic agent list of each project (no agent id: agent_inventory has it).",
    columns: {
      oname: field("oname", "Agent name."),
      host_ip: field("host_ip", "Host IP address of the agent."),
      active: field("active", "Agent state: true while the agent is active."),
    },
  },
};

export const accountDocs: DocGroup = { title: "Projects, members, groups and agents", tables };
