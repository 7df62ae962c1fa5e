// Keeps the rollups of a raw table equal to a GROUP BY over its rows: after a window's rows are
// replaced or upserted (or deleted by `reset --drop-rows`), in the same transaction, the hours the
// hourly table holds, the hours' and days' coverage from the ledger, and the days: complete ones
// from their rows, the others marked open (rollupSql.ts). Writes of one table and project take
// turns here (a transaction lock), so two windows of one day in flight at once never compute the
// day, or its coverage, from each other's half.
import { execute, isoTime, type SqlHandle } from "./exec.ts";
import { bucketRange, refreshStatements } from "./rollupSql.ts";
import { type RollupSpec, rollupOf } from "./rollups.ts";
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

function statementsOf(spec: RollupSpec, stream: string): string[] {
  const key = `${spec.source}/${stream}`;
  let s = statements.get(key);
  if (!s) {
    s = refreshStatements(spec, stream);
    statements.set(key, s);
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
  // The hours the change touches; the statements find their days themselves.
  const r = bucketRange("hourly", change.fromMs, change.toMs);
  const hours = [isoTime(r.from), isoTime(r.to)];
  const lock = `SELECT pg_advisory_xact_lock(${LOCK_KEY_SQL})`;
  const sent = [execute(tx, { text: lock, params: [`rollup/${spec.source}`, String(change.pcode)] })];
  for (const text of statementsOf(spec, change.stream)) sent.push(execute(tx, { text, params: [change.pcode, ...hours, ...scope] }));
  await Promise.all(sent);
}
