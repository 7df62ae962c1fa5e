// Dimensions (full list each run, soft delete of what disappeared) and snapshot metrics (one
// capture per run): one request, one transaction.
import { isAccountStream } from "../catalogue/types.ts";
import { advanceWatermark } from "../db/advanceWatermark.ts";
import { clearFailedCaptures } from "../db/clearFailedCaptures.ts";
import type { Row } from "../db/copyRows.ts";
import type { TxHandle } from "../db/exec.ts";
import { insertQuarantine } from "../db/insertQuarantine.ts";
import { naturalKey } from "../db/naturalKey.ts";
import { recordWindow } from "../db/recordWindow.ts";
import { softDeleteMissing } from "../db/softDeleteMissing.ts";
import type { Scope } from "../db/sqlText.ts";
import { tableInfo } from "../db/tables.ts";
import { upsertRows } from "../db/upsertRows.ts";
import type { LockHandle } from "../db/withAdvisoryLock.ts";
import { type ParsedResponse, parseResponse } from "../schemas/parse-response.ts";
import { lockedWrite } from "./db-step.ts";
import { parentColumns } from "./fan-out.ts";
import { toRows } from "./rows.ts";
import { onWindowFailure, TargetRun } from "./target-run.ts";
import { type EngineDeps, emptyCounts, type StreamCounts, type Target } from "./types.ts";

/** One capture of a snapshot target at `capturedAt` (the run's). */
export async function runSnapshotTarget(
  deps: EngineDeps,
  target: Target,
  runId: number | null,
  capturedAt: number,
  abort: AbortController,
  lock?: LockHandle,
): Promise<StreamCounts> {
  const run = new TargetRun(deps, target, runId, abort, lock);
  const counts = emptyCounts();
  if (run.stopped) {
    deps.progress?.planned(target.op.id, -1);
    return counts;
  }
  const { op } = target;
  let requests = 0;
  try {
    const res = await deps.client.call(op, { pcode: target.pcode || undefined, params: target.params, signal: run.signal });
    requests = res.attempts;
    const parsed = parseResponse(op, res.body);
    const rows = toRows(target, parsed.records, { runId, capturedAt });
    const capture: Capture = { at: capturedAt, rows, parsed, requests };
    const replaced = await lockedWrite(deps, lock, run.label, (tx) => writeCapture(tx, run, capture));
    Object.assign(counts, { windows: 1, rows: rows.length, requests, retries: requests - 1, textReplaced: replaced });
    counts.quarantined = parsed.quarantined.length;
    deps.progress?.windowDone(op.id, rows.length);
    deps.metrics?.window(target, "done", { rows: rows.length, quarantined: parsed.quarantined.length, truncated: 0 });
  } catch (e) {
    const sent = { requests, retries: Math.max(0, requests - 1) };
    const outcome = await onWindowFailure(run, { start: capturedAt, end: capturedAt }, e, sent);
    if (outcome === "lock-lost") counts.skipped = 1;
    if (outcome === "failed") Object.assign(counts, { windows: 1, failed: 1, requests, retries: sent.retries });
    else deps.progress?.planned(target.op.id, -1);
  }
  return counts;
}

/** What one capture writes. */
interface Capture {
  readonly at: number;
  readonly rows: Row[];
  readonly parsed: ParsedResponse;
  readonly requests: number;
}

/** Upserts the rows (soft-deleting what a complete list no longer holds), quarantine, ledger, watermark. */
async function writeCapture(tx: TxHandle, run: TargetRun, c: Capture): Promise<number> {
  const { target, runId } = run;
  const { op, stream } = target;
  const key = naturalKey(stream.table);
  const { quarantined } = c.parsed;
  const upserted = await upsertRows(tx, stream.table, tableInfo(stream.table).writable, key, c.rows);
  // Only a complete list may mark rows deleted: a quarantined record is not "gone".
  if (stream.kind === "dimension" && quarantined.length === 0)
    await softDeleteMissing(tx, stream.table, deletionScope(target), key, c.rows, runId);
  const where = { runId, stream: op.id, pcode: target.pcode, windowStart: c.at, windowEnd: c.at };
  const copied = await insertQuarantine(
    tx,
    quarantined.map((q) => ({ ...where, recordIndex: q.index, raw: q.raw, reason: q.reason })),
  );
  await recordWindow(tx, {
    ...where,
    partition: target.partition,
    status: "done",
    rowsFetched: c.rows.length + quarantined.length,
    rowsWritten: c.rows.length,
    requests: c.requests,
    retries: Math.max(0, c.requests - 1),
    quarantined: quarantined.length,
  });
  await clearFailedCaptures(tx, op.id, target.pcode, target.partition, c.at);
  // A snapshot's watermark is its last capture.
  await advanceWatermark(tx, op.id, target.pcode, target.partition, c.at);
  return upserted.replaced + copied.replaced;
}

/** Which rows a complete list speaks for: one parent key's, one project's, or the account's. */
function deletionScope(target: Target): Scope {
  if (target.stream.parent) return parentColumns(target.stream, target.partition);
  return isAccountStream(target.op) ? {} : { pcode: target.pcode };
}
