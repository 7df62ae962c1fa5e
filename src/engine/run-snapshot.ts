// Dimensions (full list each run, soft delete of what disappeared) and snapshot metrics (one
// capture per run): one request, one transaction.

import type { Page } from "../api/page.ts";
import { parseEnvelope, parseRecordBatches } from "../api/parse-response.ts";
import { isAccountStream } from "../catalogue/types.ts";
import type { TxHandle } from "../db/driver/exec.ts";
import type { LockHandle } from "../db/driver/withAdvisoryLock.ts";
import { recordVersions } from "../db/history/recordVersions.ts";
import { clearFailedCaptures } from "../db/ledger/clearFailedCaptures.ts";
import { recordWindows } from "../db/ledger/windowStatements.ts";
import type { Scope } from "../db/sqlText.ts";
import { tableInfo } from "../db/tables.ts";
import { insertQuarantine } from "../db/write/insertQuarantine.ts";
import { naturalKey } from "../db/write/naturalKey.ts";
import { openRowSink } from "../db/write/rowSink.ts";
import { softDeleteMissing } from "../db/write/softDeleteMissing.ts";
import type { TraceSpan } from "../tracing/tracer.ts";
import { lockedWrite } from "./db-step.ts";
import { parentColumns } from "./fan-out.ts";
import { toRows } from "./rows.ts";
import { onWindowFailure, TargetRun } from "./target-run.ts";
import { requestCounts, startWindowSpan, windowAttributes } from "./trace.ts";
import { type EngineDeps, emptyCounts, type StreamCounts, type Target } from "./types.ts";

/**
 * One capture of a snapshot target, timed when its answer arrived: under the stream's lock, so
 * the captures of a list are timed in the order they are written (a run's start is not: a run
 * that started first may capture last).
 */
export async function runSnapshotTarget(
  deps: EngineDeps,
  target: Target,
  runId: number | null,
  abort: AbortController,
  lock?: LockHandle,
  targetSpan?: TraceSpan,
): Promise<StreamCounts> {
  const run = new TargetRun(deps, target, runId, abort, lock, targetSpan);
  const counts = emptyCounts();
  if (run.stopped) {
    deps.progress?.planned(target.op.id, -1);
    return counts;
  }
  const { op } = target;
  let requests = 0;
  // The capture is the target's one window (a zero-length one in the ledger) at `at`: when it was
  // asked (a failure without an answer), then when its answer arrived.
  let at = deps.now();
  const span = startWindowSpan(deps, target, { start: at, end: at }, run.span);
  try {
    const res = await deps.client.call(op, { pcode: target.pcode || undefined, params: target.params, signal: run.signal, span });
    requests = res.attempts;
    at = deps.now();
    span.setAttributes(windowAttributes({ start: at, end: at }));
    const capture: Capture = { at, page: res.body, envelope: null, requests };
    try {
      capture.envelope = parseEnvelope(op, res.body);
      const wrote = await lockedWrite(deps, lock, run.label, (tx) => writeCapture(tx, run, capture));
      Object.assign(counts, { windows: 1, rows: wrote.rows, requests, retries: requests - 1, textReplaced: wrote.replaced });
      counts.quarantined = wrote.quarantined;
      deps.progress?.windowDone(op.id, wrote.rows);
      deps.metrics?.window(target, "done", { rows: wrote.rows, quarantined: wrote.quarantined, truncated: 0 });
      span.setAttributes({ "apm.outcome": "done", "apm.rows": wrote.rows, "apm.quarantined": wrote.quarantined });
    } finally {
      res.body.dispose();
    }
  } catch (e) {
    const sent = { requests, retries: Math.max(0, requests - 1) };
    const outcome = await onWindowFailure(run, { start: at, end: at }, e, sent, span);
    if (outcome === "lock-lost") counts.skipped = 1;
    if (outcome === "failed") Object.assign(counts, { windows: 1, failed: 1, requests, retries: sent.retries });
    else deps.progress?.planned(target.op.id, -1);
  } finally {
    span.setAttributes(requestCounts({ requests, retries: Math.max(0, requests - 1) }));
    span.end();
  }
  return counts;
}

/** What one capture writes. */
interface Capture {
  readonly at: number;
  readonly page: Page;
  envelope: unknown;
  readonly requests: number;
}

interface CaptureWrite {
  readonly rows: number;
  readonly quarantined: number;
  readonly replaced: number;
}

/** Upserts the rows (soft-deleting what a complete list no longer holds), their versions, quarantine, ledger, watermark. */
async function writeCapture(tx: TxHandle, run: TargetRun, c: Capture): Promise<CaptureWrite> {
  const { target, runId } = run;
  const { op, stream } = target;
  const key = naturalKey(stream.table);
  const sink = openRowSink(tx, stream.table, tableInfo(stream.table).writable, { kind: "upsert", key });
  const where = { runId, stream: op.id, pcode: target.pcode, windowStart: c.at, windowEnd: c.at };
  let quarantined = 0;
  let replaced = 0;
  for (const batch of parseRecordBatches(op, c.page, c.envelope)) {
    const rows = toRows(target, batch.records, { runId, capturedAt: c.at });
    if (rows.length > 0) await sink.write(rows);
    if (batch.quarantined.length === 0) continue;
    quarantined += batch.quarantined.length;
    const refused = batch.quarantined.map((q) => ({ ...where, recordIndex: q.index, raw: q.raw, reason: q.reason }));
    replaced += (await insertQuarantine(tx, refused)).replaced;
  }
  const upserted = await sink.finish();
  const rows = upserted.staged?.rows ?? 0;
  // Only a complete list may mark rows deleted: a quarantined record is not "gone".
  if (stream.kind === "dimension" && quarantined === 0)
    await softDeleteMissing(tx, stream.table, deletionScope(target), key, upserted.staged, runId);
  // The dimension's versions (<table>_history) follow what the table now holds in the list's scope.
  if (stream.kind === "dimension") await recordVersions(tx, stream.table, deletionScope(target), c.at, runId);
  await clearFailedCaptures(tx, op.id, target.pcode, target.partition, c.at);
  // The capture's ledger row (a zero-length window), and its watermark: a snapshot's is its last capture.
  const ledger = { windowStart: c.at, windowEnd: c.at, status: "done" as const, rowsFetched: rows + quarantined, rowsWritten: rows };
  await recordWindows(tx, {
    window: { stream: op.id, pcode: target.pcode, partition: target.partition },
    runId,
    ledger: [{ ...ledger, requests: c.requests, retries: Math.max(0, c.requests - 1), quarantined }],
    marks: null,
    watermark: c.at,
  });
  return { rows, quarantined, replaced: replaced + upserted.replaced };
}

/** Which rows a complete list speaks for: one parent key's, one project's, or the account's. */
function deletionScope(target: Target): Scope {
  if (target.stream.parent) return parentColumns(target.stream, target.partition);
  return isAccountStream(target.op) ? {} : { pcode: target.pcode };
}
