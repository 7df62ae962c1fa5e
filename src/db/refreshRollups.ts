// Keeps the rollups of a raw table equal to a GROUP BY over its rows: after a window's rows are
// replaced or upserted (or deleted by `reset --drop-rows`), in the same transaction, the hours the
// change touched are computed again from the raw rows, then the daily rows of the keys those hours
// held or hold, and each bucket's coverage from the ledger (rollupSql.ts). Writes of one table and
// project take turns here (a transaction lock), so two windows of one day in flight at once never
// compute the day from each other's half.
import { isoTime, type SqlHandle } from "./exec.ts";
import { bucketRange, type RefreshStatement, refreshCoverage, refreshStatements } from "./rollupSql.ts";
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

const statements = new Map<string, RefreshStatement[]>();
const COVERAGE = ROLLUP_GRAINS.map((grain) => ({ grain, upsert: refreshCoverage(grain) }));

function statementsOf(spec: RollupSpec): RefreshStatement[] {
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
  const sent: Promise<unknown>[] = [tx.unsafe(lock, [`rollup/${spec.source}`, String(change.pcode)]).execute()];
  // The buckets' partitions are new and grow within a run, so their statistics say "empty": the
  // planner would match a day's keys row by row (a day of stat_sql: 10 k x 10 k comparisons, a
  // minute per window). The refresh's joins hash or sort instead, whatever the statistics say.
  sent.push(tx.unsafe("SET LOCAL enable_nestloop = off").execute());
  for (const s of statementsOf(spec)) sent.push(tx.unsafe(s.text, [change.pcode, ...range(s.range), ...scope] as never[]).execute());
  if (spec.coverage)
    for (const c of COVERAGE) sent.push(tx.unsafe(c.upsert, [change.stream, change.pcode, ...range(c.grain)] as never[]).execute());
  sent.push(tx.unsafe("SET LOCAL enable_nestloop TO DEFAULT").execute());
  await Promise.all(sent);
}
