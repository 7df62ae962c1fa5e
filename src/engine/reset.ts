// `reset`: forget windows of some streams and projects so that the next sync or backfill fetches
// them again (a mapping was fixed, a project's token replaced). Per slice (stream, project,
// partition), under the stream's advisory lock and in one transaction: the ledger rows of the
// windows overlapping the range go, the watermark moves back to the first of them, and with
// `dropRows` the rows of windowed aggregates in that span (and their quarantined records) go too.
// Nothing of another stream or project is touched. The next sync fetches a forgotten range
// wherever it lies (a hole in the ledger is work, src/windows/plan.ts syncStart), except before
// a stream's retention start, where prune drops the time and neither sync nor backfill fetches
// it: a reset that would leave a hole there is refused, changing nothing.
import type { OperationDef } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { SqlHandle } from "../db/driver/exec.ts";
import { withAdvisoryLock } from "../db/driver/withAdvisoryLock.ts";
import { deleteLedgerWindows } from "../db/ledger/deleteLedgerWindows.ts";
import { type LedgerEntry, readLedger } from "../db/ledger/readLedger.ts";
import { readStreamPartitions, type StreamPartition } from "../db/ledger/readStreamPartitions.ts";
import { readWatermark } from "../db/ledger/readWatermark.ts";
import { rewindWatermark } from "../db/ledger/rewindWatermark.ts";
import { clearWindow, recordWindows } from "../db/ledger/windowStatements.ts";
import { clearCrashes } from "../db/ledger/windowsInFlight.ts";
import { rollupOf } from "../db/rollups/spec.ts";
import type { Scope } from "../db/sqlText.ts";
import { countWindowRows, deleteWindowRows } from "../db/write/deleteWindowRows.ts";
import { UsageError } from "../usage-error.ts";
import { retainedStart, streamRetention } from "../warehouse/retention.ts";
import { isGone, type WindowStatus } from "../windows/types.ts";
import { lockedWrite, retryTake } from "./db-step.ts";
import { targetScope } from "./rows.ts";
import { projectTargets, selectOperations } from "./targets.ts";
import { type EngineDeps, streamLockName } from "./types.ts";
import { vacuumAfterRun } from "./vacuum-after-run.ts";

export interface ResetRequest {
  /** Stream ids or prefixes, as `sync --streams` takes them. */
  readonly streams: readonly string[];
  /** Only these projects; null: every project the warehouse holds for the streams. */
  readonly projects: readonly number[] | null;
  /** Windows overlapping [from, to) are forgotten (whole windows); null: unbounded on that side. */
  readonly from: number | null;
  readonly to: number | null;
  /** Also delete the rows of windowed aggregates in the forgotten span. */
  readonly dropRows: boolean;
  /** Say what would be forgotten; change nothing. */
  readonly dryRun: boolean;
}

export interface SliceReset extends StreamPartition {
  /** The forgotten windows (in a dry run: those that would be). */
  readonly windows: readonly { readonly start: number; readonly end: number; readonly status: WindowStatus }[];
  readonly watermark: { readonly before: number | null; readonly after: number | null };
  /** Rows deleted with dropRows (in a dry run: that would be); null without it. */
  readonly rowsDropped: number | null;
  /** Another run holds the stream's lock: nothing of this slice was forgotten. */
  readonly locked: boolean;
}

/** The selected streams; a usage error (exit 2) for unknown ones, or for dropRows on streams whose rows have no window. */
export function resetOperations(config: Config, req: Pick<ResetRequest, "streams" | "dropRows">): OperationDef[] {
  const ops = selectOperations(req.streams, config.sync.inputs);
  const unwindowed = ops.filter((op) => op.stream!.kind !== "aggregate");
  if (req.dropRows && unwindowed.length > 0)
    throw new UsageError(
      `--drop-rows deletes the rows of windowed aggregates (their rows belong to a window); not of ${unwindowed.map((o) => o.id).join(", ")} (the refetch upserts their rows: reset them without --drop-rows)`,
    );
  return ops;
}

export async function resetStreams(deps: EngineDeps, req: ResetRequest): Promise<SliceReset[]> {
  const ops = resetOperations(deps.config, req);
  const byId = new Map(ops.map((op) => [op.id, op]));
  const slices = await readStreamPartitions(
    deps.database.sql,
    ops.map((op) => op.id),
    req.projects,
  );
  // Every slice's row scope, and that no slice would be left with a hole nothing fills, are known
  // before anything is changed.
  const scopes = slices.map((s) => (req.dropRows ? rowScope(deps.config, byId.get(s.stream)!, s) : {}));
  const problems = await retentionProblems(deps, slices, req);
  if (problems.length > 0) throw new UsageError(problems.join("; "));
  const out: SliceReset[] = [];
  for (const [i, slice] of slices.entries()) {
    const op = byId.get(slice.stream)!;
    if (req.dryRun) {
      out.push(await forget(deps.database.sql, slice, req, op, scopes[i]!, false));
      continue;
    }
    const label = `reset of ${slice.stream} pcode=${slice.pcode}${slice.partition ? ` [${slice.partition}]` : ""}`;
    const held = await withAdvisoryLock(
      deps.database,
      streamLockName(slice.stream, slice.partition, slice.pcode),
      slice.pcode,
      (lock) => lockedWrite(deps, lock, label, (tx) => forget(tx, slice, req, op, scopes[i]!, true)),
      retryTake(deps, `the lock of the ${label}`),
    );
    const none = { windows: [], watermark: { before: null, after: null }, rowsDropped: null };
    out.push(held.acquired ? held.value : { ...slice, ...none, locked: true });
  }
  // The rows and ledger rows it deleted are dead rows, which nothing else vacuums on the embedded
  // database: vacuumed now, their space is reused by the refetch that follows.
  if (!req.dryRun) await vacuumAfterRun(deps);
  return out;
}

/** Reads what the slice forgets and, with `apply`, forgets it (in the caller's transaction). */
async function forget(
  sql: SqlHandle,
  slice: StreamPartition,
  req: ResetRequest,
  op: OperationDef,
  scope: Scope,
  apply: boolean,
): Promise<SliceReset> {
  const { table } = op.stream!;
  const { stream, pcode, partition } = slice;
  const entries = await readLedger(sql, {
    stream,
    pcode,
    partition,
    ...(req.from !== null ? { from: req.from } : {}),
    ...(req.to !== null ? { to: req.to } : {}),
  });
  const before = await readWatermark(sql, stream, pcode, partition);
  const first = entries[0]?.windowStart;
  const windows = entries.map((e) => ({ start: e.windowStart, end: e.windowEnd, status: e.status }));
  if (!apply) {
    const after = before !== null && first !== undefined ? Math.min(before, first) : before;
    const span = dropSpan(req, entries);
    const rowsDropped = req.dropRows ? await countWindowRows(sql, { table, pcode, ...span, scope }) : null;
    return { ...slice, windows, watermark: { before, after }, rowsDropped, locked: false };
  }
  await deleteLedgerWindows(
    sql,
    entries.map((e) => e.id),
  );
  // A window skipped for its crashes is fetched again too: reset is the user's say-so.
  await clearCrashes(sql, slice, req.from ?? EARLIEST, req.to ?? LATEST);
  const after = first === undefined ? before : await rewindWatermark(sql, stream, pcode, partition, first);
  let rowsDropped: number | null = null;
  const live = entries.filter((e) => !isGone(e.status));
  let span = { start: Math.min(...live.map((e) => e.windowStart)), end: Math.max(...live.map((e) => e.windowEnd)) };
  if (req.dropRows) {
    const dropped = dropSpan(req, entries);
    const deleted = await deleteWindowRows(sql, { table, pcode, ...dropped, scope });
    rowsDropped = deleted.rows;
    await clearWindow(sql, { stream, pcode, partition, start: dropped.start.getTime(), end: dropped.end.getTime() });
    // The hours of the live windows and of the rows deleted, not the whole range asked for (without
    // --from and --to: 1970 to 9999, 70 million hours marked), and not before a pruned window's
    // end: there the raw rows are gone, the rollups keep what they summed.
    const prunedUntil = Math.max(0, ...entries.filter((e) => isGone(e.status)).map((e) => e.windowEnd));
    const from = Math.min(span.start, deleted.span?.fromMs ?? Number.POSITIVE_INFINITY);
    const to = Math.max(span.end, deleted.span?.toMs ?? Number.NEGATIVE_INFINITY);
    span = { start: Math.max(from, dropped.start.getTime(), prunedUntil), end: Math.min(to, dropped.end.getTime()) };
  }
  // The rollups' hours of the span are marked: their rows went (--drop-rows), and the ledger no longer covers it.
  const rollup = rollupOf(table);
  if (rollup && span.end > span.start)
    await recordWindows(sql, {
      window: { stream, pcode, partition },
      runId: null,
      ledger: [],
      marks: { source: rollup.source, spans: [{ fromMs: span.start, toMs: span.end }] },
      watermark: null,
    });
  return { ...slice, windows, watermark: { before, after }, rowsDropped, locked: false };
}

/**
 * Why forgetting the range's windows of a slice would leave a hole nothing fills: windows before
 * the stream's retention start (prune drops that time; a sync plans nothing there and a backfill is
 * refused). Each problem says where the retention starts and the --from that avoids it.
 */
async function retentionProblems(deps: EngineDeps, slices: readonly StreamPartition[], req: ResetRequest): Promise<string[]> {
  const problems: string[] = [];
  for (const s of slices) {
    const floor = retainedStart(deps.config.retention, s.stream, Number.NEGATIVE_INFINITY, deps.now());
    if (!Number.isFinite(floor) || (req.from !== null && req.from >= floor)) continue;
    const to = req.to === null ? floor : Math.min(req.to, floor);
    const early = await readLedger(deps.database.sql, { ...s, ...(req.from !== null ? { from: req.from } : {}), to });
    if (early.length === 0) continue;
    const day = new Date(floor).toISOString().slice(0, 10);
    const why = streamRetention(deps.config.retention, s.stream)?.why ?? "";
    problems.push(
      `${s.stream} pcode=${s.pcode}: ${early.length} window(s) before ${day}, where its retention starts (APM_RETENTION ${why}): ` +
        `prune drops that time and neither sync nor backfill fetches it again, so reset would leave a hole nothing fills; reset from ${day} on (--from ${day})`,
    );
  }
  return problems;
}

// Open ends of the range: every row of the slice.
const EARLIEST = 0;
const LATEST = Date.UTC(9999, 0, 1);

/** The rows to drop: the range widened to the forgotten windows (a boundary inside a window takes all of it). */
function dropSpan(req: ResetRequest, entries: readonly LedgerEntry[]): { start: Date; end: Date } {
  const start = Math.min(req.from ?? EARLIEST, ...entries.map((e) => e.windowStart));
  const end = Math.max(req.to ?? LATEST, ...entries.map((e) => e.windowEnd));
  return { start: new Date(start), end: new Date(end) };
}

/** Which rows of its table a slice owns: the stream's constant columns and its partition's inputs. */
function rowScope(config: Config, op: OperationDef, slice: StreamPartition): Scope {
  const target = projectTargets(op, slice.pcode, config.sync.inputs).find((t) => t.partition === slice.partition);
  if (!target && Object.keys(op.stream!.paramColumns ?? {}).length > 0)
    throw new UsageError(
      `${op.id} [${slice.partition}]: this partition is no longer in the config's inputs, so its rows cannot be told apart; reset it without --drop-rows`,
    );
  return target ? targetScope(target) : { ...op.stream!.constants };
}
