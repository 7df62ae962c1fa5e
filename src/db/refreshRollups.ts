// Keeps the rollups of a raw table equal to a GROUP BY over its rows: after a window's rows are
// replaced or upserted (or deleted by `reset --drop-rows`), in the same transaction, the hours the
// change touched are computed again from the raw rows, then the daily rows of the keys those hours
// held or hold, and each bucket's coverage from the ledger (rollupSql.ts). Writes of one table and
// project take turns here (a transaction lock), so two windows of one day in flight at once never
// compute the day from each other's half.
import { execute, isoTime, type SqlHandle } from "./exec.ts";
import { bucketRange, refreshCoverage, refreshStatements } from "./rollupSql.ts";
import { ROLLUP_GRAINS, type RollupSpec, rollupOf } from "./rollups.ts";
import { LOCK_KEY_SQL } from "./withAdvisoryLock.ts";

/** What a write changed: one project's rows of a table, within its scope values, over a time span. */
export interface RollupChange {
  readonly table: string;
  readonly pcode: number;
  /** Values of the rollup's scope columns (a stream's constants, e.g. metric and series_form). */
  readonly scope: Readonly<Record<string, unknown>>;
  /** The stream whose ledger says how much of a bucket is fetched. */
  readonly stream: string;
  readonly fromMs: number;
  readonly toMs: number;
}

const statements = new Map<string, string[]>();
const COVERAGE = ROLLUP_GRAINS.map((grain) => ({ grain, upsert: refreshCoverage(grain) }));

function statementsOf(spec: RollupSpec): string[] {
  let s = statements.get(spec.source);
  if (!s) {
    s = refreshStatements(spec);
    statements.set(spec.source, s);
  }
  return s;
}

/** Brings the rollups up to date with `change`; nothing for a table without rollups. Pipelined. */
export async function refreshRollups(tx: SqlHandle, change: RollupChange): Promise<void> {
  const spec = rollupOf(change.table);
  if (!spec || change.toMs <= change.fromMs) return;
  const scope = spec.scope.map((c) => {
    const v = change.scope[c];
    if (v === undefined) throw new Error(`rollup of ${spec.source}: the write names no ${c}`);
    return v;
  });
  const range = (grain: (typeof ROLLUP_GRAINS)[number]) => {
    const r = bucketRange(grain, change.fromMs, change.toMs);
    return [isoTime(r.from), isoTime(r.to)];
  };
  const lock = `SELECT pg_advisory_xact_lock(${LOCK_KEY_SQL})`;
  const sent = [execute(tx, { text: lock, params: [`rollup/${spec.source}`, String(change.pcode)] })];
  const hours = range("hourly");
  for (const text of statementsOf(spec)) sent.push(execute(tx, { text, params: [change.pcode, ...hours, ...scope] }));
  if (spec.coverage)
    for (const c of COVERAGE) sent.push(execute(tx, { text: c.upsert, params: [change.stream, change.pcode, ...range(c.grain)] }));
  await Promise.all(sent);
}
