// Per-key comparison of the warehouse with the sandbox's ground truth.
import type postgres from "postgres";
import { tableInfo } from "../../src/db/tables.ts";
import { snakeCase } from "../../src/kernel/record.ts";
import { COUNT_FIELD, type GroundTruth, NATURAL_KEYS } from "../../src/sandbox/index.ts";
import type { EngineHarness } from "./engine-harness.ts";
import { ledgerRows, tableOf } from "./ledger-checks.ts";
import { CUBE } from "./time.ts";

/** SQL text of a column as the sandbox prints it in naturalKey (epoch ms for times). */
function keyExpr(table: string, column: string): string {
  const type = tableInfo(table).types.get(column);
  if (!type) throw new Error(`${table} has no column ${column}`);
  return type.startsWith("timestamp") ? `(extract(epoch from "${column}") * 1000)::bigint::text` : `"${column}"::text`;
}

/**
 * Per natural key (the sandbox's `field=value|...` form), the sum of the stream's count field
 * in Postgres over windows inside [from, to), leaving out the windows listed in `exclude`.
 * API field names map to columns by the warehouse's one rule, snakeCase (Service_hash -> service_hash).
 */
export async function dbCountsByKey(
  sql: postgres.Sql,
  opId: string,
  pcode: number,
  from: number,
  to: number,
  exclude: readonly { start: number; end: number }[] = [],
): Promise<Map<string, number>> {
  const table = tableOf(opId);
  const fields = NATURAL_KEYS[opId]!;
  const countColumn = snakeCase(COUNT_FIELD[opId]!);
  const keyParts = fields.map((f) => `'${f}=' || coalesce(${keyExpr(table, snakeCase(f))}, 'null')`).join(` || '|' || `);
  const rows = await sql.unsafe<{ k: string; n: string }[]>(
    `SELECT ${keyParts} AS k, sum("${countColumn}")::text AS n FROM "${table}" t
      WHERE pcode = $1 AND window_start >= $2 AND window_end <= $3
        AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($4::jsonb) AS x(s bigint, e bigint)
                         WHERE t.window_start = to_timestamp(x.s / 1000.0) AND t.window_end = to_timestamp(x.e / 1000.0))
      GROUP BY 1`,
    [pcode, new Date(from), new Date(to), JSON.stringify(exclude.map((w) => ({ s: w.start, e: w.end })))],
  );
  return new Map(rows.map((r) => [r.k, Number(r.n)]));
}

/** Ground truth per key over [from, to), minus the cubes starting in `excludeCubes`. */
export function truthCountsByKey(
  truth: GroundTruth,
  pcode: number,
  opId: string,
  from: number,
  to: number,
  excludeCubes: readonly number[] = [],
): Map<string, number> {
  const out = truth.countsByKey(pcode, opId, from, to);
  for (const cube of excludeCubes) {
    for (const [k, n] of truth.countsByKey(pcode, opId, cube, cube + CUBE)) {
      const left = (out.get(k) ?? 0) - n;
      if (left === 0) out.delete(k);
      else out.set(k, left);
    }
  }
  return out;
}

/** Keys whose values differ between two maps (at most `max`), for readable failures. */
export function mapDiff(actual: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>, max = 5): string[] {
  const out: string[] = [];
  for (const k of new Set([...actual.keys(), ...expected.keys()])) {
    if (actual.get(k) !== expected.get(k)) out.push(`${k}: db ${actual.get(k)} truth ${expected.get(k)}`);
    if (out.length >= max) break;
  }
  return out;
}

/**
 * Compares one stream of one project with the ground truth over [from, to), leaving out the
 * windows the ledger marks truncated (their truth is checked separately). Returns the Postgres
 * sums and the differing keys (empty when equal).
 */
export async function compareWithTruth(
  h: Pick<EngineHarness, "sql" | "truth">,
  opId: string,
  pcode: number,
  from: number,
  to: number,
): Promise<{ db: Map<string, number>; truthKeys: number; diff: string[] }> {
  const truncated = (await ledgerRows(h.sql, { stream: opId, status: "truncated" })).filter(
    (l) => l.pcode === pcode && l.start >= from && l.end <= to,
  );
  const db = await dbCountsByKey(h.sql, opId, pcode, from, to, truncated);
  const truth = truthCountsByKey(
    h.truth,
    pcode,
    opId,
    from,
    to,
    truncated.map((w) => w.start),
  );
  const diff = mapDiff(db, truth);
  if (db.size !== truth.size) diff.push(`keys: db ${db.size} truth ${truth.size}`);
  return { db, truthKeys: truth.size, diff };
}
