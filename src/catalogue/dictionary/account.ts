// The project-level dimensions: project detail and the basic agent list. Each table's columns are
// declared once (declare.ts), from which the record schemas (src/schemas/project.ts), the tables
// (src/db/schema/account.ts) and these dictionary entries come. Spec "Resources and their fields":
// Project detail.
import { boolean, jsonb, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, docsOf, local, of, says, text } from "../../kernel/declare.ts";
import { JSON_KEPT, type TableDoc, UNDOCUMENTED } from "../../kernel/docs.ts";
import { bool, num } from "../../kernel/primitives.ts";
import { opt } from "../../kernel/record.ts";
import { f64 } from "../../kernel/sql-types.ts";
import { anyTimeOf, PROJECT_STATUS, projectStatus as status } from "../account.ts";

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

export const projectDimensionDocs: Record<string, TableDoc> = {
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
