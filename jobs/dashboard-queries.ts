// The documented dashboard queries, read from docs/design.md itself (the SQL block after "The
// dashboard queries below"), so that `bench:warehouse` times and the plan test checks exactly what
// users read.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

/** Where the queries are documented, relative to the package root. */
export const QUERIES_DOC = "docs/design.md";

export interface DashboardQuery {
  /** Its `-- comment` line. */
  readonly what: string;
  /** As written: schema `apm.`, project 1234. */
  readonly sql: string;
}

export function dashboardQueries(): DashboardQuery[] {
  const doc = readFileSync(join(packageRoot(), QUERIES_DOC), "utf8");
  const at = doc.indexOf("The dashboard queries below");
  const block = at < 0 ? undefined : /```sql\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  if (!block) throw new Error(`${QUERIES_DOC}: no SQL block after 'The dashboard queries below'`);
  return block
    .split(/;\n/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ({ what: s.split("\n")[0]!.replace(/^-- /, ""), sql: s.split("\n").slice(1).join("\n") }));
}

/** A query for `schema` and project `pcode`. */
export function forWarehouse(q: DashboardQuery, schema: string, pcode: number): string {
  return q.sql.replaceAll("apm.", `"${schema}".`).replaceAll("1234", String(pcode));
}
