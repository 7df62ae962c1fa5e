// The README's dashboard queries, read from the README itself (the SQL block after "The dashboard
// queries below"), so that `bench:warehouse` times and the plan test checks exactly what users read.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

export interface ReadmeQuery {
  /** Its `-- comment` line. */
  readonly what: string;
  /** As written: schema `apm.`, project 1234. */
  readonly sql: string;
}

export function readmeQueries(): ReadmeQuery[] {
  const readme = readFileSync(join(packageRoot(), "README.md"), "utf8");
  const after = readme.slice(readme.indexOf("The dashboard queries below"));
  const block = /```sql\n([\s\S]*?)```/.exec(after)?.[1];
  if (!block) throw new Error("README.md: no SQL block after 'The dashboard queries below'");
  return block
    .split(/;\n/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ({ what: s.split("\n")[0]!.replace(/^-- /, ""), sql: s.split("\n").slice(1).join("\n") }));
}

/** A query for `schema` and project `pcode`. */
export function forWarehouse(q: ReadmeQuery, schema: string, pcode: number): string {
  return q.sql.replaceAll("apm.", `"${schema}".`).replaceAll("1234", String(pcode));
}
