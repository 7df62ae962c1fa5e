// How many ledger windows a prune would mark `pruned` (its dry run).
import { type SqlHandle, toDate } from "../driver/exec.ts";
import { prunableWindows } from "../sqlText.ts";

/** Windows of `streams` starting before `until` that are not marked pruned yet. */
export async function countPrunable(sql: SqlHandle, streams: readonly string[], until: number): Promise<number> {
  if (streams.length === 0) return 0;
  const where = prunableWindows(streams, toDate(until));
  const [row] = await sql.unsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM "sync_windows" WHERE ${where.text}`,
    where.params as never[],
  );
  return row!.n;
}
