// Keeps the rollups of a raw table equal to a GROUP BY over its rows: after a window's rows are
// replaced or upserted (or deleted by `reset --drop-rows`), in the same transaction, the hours the
// hourly table holds and their coverage from the ledger, then the days: complete ones from their
// rows, the others marked open (rollupSql.ts). The days' statements take turns between the writes
// of one table and project (a transaction lock), so two windows of one day in flight at once never
// compute the day from each other's half. A statistics window on the hourly grid that adds new
// hours to open days it does not complete (most of a backfill) writes nothing of the days and takes
// no turn: its hours are its own (a stream is written by one process at a time, under its advisory
// lock, and the windows it has in flight do not overlap), and no other write can close its days
// before it commits (they would need its hours).
import { execute, isoTime, type SqlHandle } from "./exec.ts";
import { bucketRange, closeDays, type RefreshStatements, refreshStatements } from "./rollupSql.ts";
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
  /**
   * Every row the write left in the span is of a whole hour (a window of an hour or more on the
   * hour, not split): a rollup read from its raw rows then sums none of them into its hourly table.
   */
  readonly wholeHours?: boolean;
}

const statements = new Map<string, RefreshStatements>();

function statementsOf(spec: RollupSpec, stream: string): RefreshStatements {
  const key = `${spec.source}/${stream}`;
  let s = statements.get(key);
  if (!s) {
    s = refreshStatements(spec, stream);
    statements.set(key, s);
  }
  return s;
}

/** Takes the turn of the rollups of `source` and `pcode` until the transaction ends. */
const takeTurn = (tx: SqlHandle, source: string, pcode: number) =>
  execute(tx, { text: `SELECT pg_advisory_xact_lock(${LOCK_KEY_SQL})`, params: [`rollup/${source}`, String(pcode)] });

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
  const params = [change.pcode, isoTime(r.from), isoTime(r.to), ...scope];
  const send = (texts: readonly string[]) => texts.map((text) => execute(tx, { text, params }));
  const { deleteHours, insertHours, coverHours, days } = statementsOf(spec, change.stream);
  const hours = [deleteHours, ...(spec.hoursFromRaw && change.wholeHours ? [] : [insertHours]), ...(coverHours ? [coverHours] : [])];
  // A window off the hourly grid shares its hours with the windows beside it: it takes its turn first.
  if (!coverHours || r.from !== change.fromMs || r.to !== change.toMs) {
    await Promise.all([takeTurn(tx, spec.source, change.pcode), ...send([...hours, ...days])]);
    return;
  }
  const alone = (await Promise.all(send(hours))).at(-1) === 1;
  if (!alone) await Promise.all([takeTurn(tx, spec.source, change.pcode), ...send(days)]);
}

/**
 * After a run's windows of `stream` for project `pcode` have committed: closes the days of `table`'s
 * rollup that its ledger now covers wholly but that are still open (their last windows were in
 * flight together, and each saw the other's hours missing). Nothing for a table without coverage.
 */
export async function closeCompleteDays(tx: SqlHandle, table: string, pcode: number, stream: string): Promise<void> {
  const spec = rollupOf(table);
  if (!spec?.coverage) return;
  await Promise.all([takeTurn(tx, spec.source, pcode), execute(tx, { text: closeDays(spec, stream, "complete"), params: [pcode] })]);
}
