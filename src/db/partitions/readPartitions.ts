// The monthly partitions of a table, with their bounds and size (for `prune`).
import type { SqlHandle } from "../driver/exec.ts";
import { quoteIdent } from "../sqlText.ts";

export interface PartitionInfo {
  readonly name: string;
  /** Bounds, epoch ms: [from, to). */
  readonly from: number;
  readonly to: number;
  /** pg_total_relation_size: the table, its indexes and TOAST. */
  readonly bytes: number;
  /** Exact row count, when asked for. */
  readonly rows: number | null;
}

// The bound text is rendered in the session's time zone: read back as timestamptz, not as text.
const bound = (word: "FROM" | "TO") =>
  `(extract(epoch from (regexp_match(pg_get_expr(c.relpartbound, c.oid), '${word} \\(''([^'']+)''\\)'))[1]::timestamptz) * 1000)::float8`;

/**
 * The partitions of `table` ending at or before `endingBy` (all without it), oldest first; with
 * `countRows`, each one's exact number of rows (a scan of each: ask only for those to drop).
 */
export async function readPartitions(
  sql: SqlHandle,
  table: string,
  opts: { readonly endingBy?: number; readonly countRows?: boolean } = {},
): Promise<PartitionInfo[]> {
  const rows = await sql.unsafe<{ name: string; from: number; to: number; bytes: number }[]>(
    `SELECT * FROM (
       SELECT c.relname AS name, ${bound("FROM")} AS "from", ${bound("TO")} AS "to", pg_total_relation_size(c.oid)::float8 AS bytes
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1) AND c.relkind = 'r'
     ) p WHERE $2::float8 IS NULL OR "to" <= $2::float8 ORDER BY "from"`,
    [quoteIdent(table), opts.endingBy ?? null],
  );
  const out: PartitionInfo[] = [];
  for (const r of rows) {
    const counted = opts.countRows ? await sql.unsafe<{ n: number }[]>(`SELECT count(*)::float8 AS n FROM ${quoteIdent(r.name)}`) : null;
    out.push({ ...r, rows: counted ? counted[0]!.n : null });
  }
  return out;
}
