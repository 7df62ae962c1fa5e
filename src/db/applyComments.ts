// COMMENT ON the tables, views and columns of the warehouse schema (the data dictionary, issue 18).
// Monthly partitions are not for users (they read the partitioned table): they get none.
// Only comments that differ from the database's are written: a second `migrate` changes nothing,
// and a warehouse made before the dictionary existed gets every comment on its next `migrate`.
import type postgres from "postgres";
import { quoteIdent } from "./sqlText.ts";

/** One comment: on a relation (column null) or on one of its columns. */
export interface CommentTarget {
  readonly relation: string;
  readonly column: string | null;
  readonly text: string;
}

// COMMENT ON names the kind of relation: the database's, so a view turned into a table still works.
const KEYWORD: Readonly<Record<string, string>> = {
  r: "TABLE",
  p: "TABLE",
  v: "VIEW",
  m: "MATERIALIZED VIEW",
  f: "FOREIGN TABLE",
};

// COMMENT is for the owner of the relation: anyone else gets this SQLSTATE.
const INSUFFICIENT_PRIVILEGE = "42501";

// E'' form: correct whatever standard_conforming_strings says. COMMENT takes no parameters.
const literal = (text: string) => `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;

interface Current {
  readonly rel: string;
  readonly kind: string;
  readonly col: string | null;
  readonly comment: string | null;
}

/**
 * Writes the comments of `targets` that differ from what `schema` holds, in one transaction; a
 * target naming a relation or column the schema lacks is skipped (tests keep the dictionary free of
 * them). Returns how many comments it wrote. COMMENT needs the owner of the relations: the role
 * that runs `migrate`.
 */
export async function applyComments(sql: postgres.Sql, schema: string, targets: readonly CommentTarget[]): Promise<number> {
  const rows = await sql<Current[]>`
    SELECT c.relname AS rel, c.relkind::text AS kind, NULL::text AS col, obj_description(c.oid, 'pg_class') AS comment
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
    UNION ALL
    SELECT c.relname, c.relkind::text, a.attname::text, col_description(c.oid, a.attnum)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition`;
  const key = (rel: string, col: string | null) => `${rel}\u0000${col ?? ""}`;
  const current = new Map(rows.map((r) => [key(r.rel, r.col), r]));
  const statements: string[] = [];
  for (const t of targets) {
    const now = current.get(key(t.relation, t.column));
    if (!now || now.comment === t.text) continue;
    const relation = `${quoteIdent(schema)}.${quoteIdent(t.relation)}`;
    statements.push(
      t.column === null
        ? `COMMENT ON ${KEYWORD[now.kind]} ${relation} IS ${literal(t.text)}`
        : `COMMENT ON COLUMN ${relation}.${quoteIdent(t.column)} IS ${literal(t.text)}`,
    );
  }
  if (statements.length === 0) return 0;
  try {
    await sql.begin((tx) => tx.unsafe(statements.join(";\n")));
  } catch (e) {
    if ((e as { code?: unknown }).code !== INSUFFICIENT_PRIVILEGE) throw e;
    throw new Error(
      `the data dictionary's comments need the owner of the tables of schema ${schema}: run migrate as that role (${(e as Error).message})`,
      {
        cause: e,
      },
    );
  }
  return statements.length;
}
