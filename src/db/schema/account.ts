// The project-level dimensions: project detail and the agent list. The columns are declared once,
// with the records' fields and their meanings, in catalogue/dictionary/account.ts.
import { pgTable, primaryKey } from "drizzle-orm/pg-core";
import { agentColumns, projectDetailColumns } from "../../catalogue/dictionary/account.ts";
import { tableOf } from "../../kernel/declare.ts";
import { i64 } from "../../kernel/sql-types.ts";
import { dimensionColumns } from "../../kernel/tables.ts";

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
