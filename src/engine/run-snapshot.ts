// Dimensions (full list each run, soft delete of what disappeared) and snapshot metrics (one
// capture per run): one request, one transaction.
import { AuthError } from "../api/errors.ts";
import { advanceWatermark } from "../db/advanceWatermark.ts";
import { clearFailedCaptures } from "../db/clearFailedCaptures.ts";
import type { SqlHandle } from "../db/exec.ts";
import { insertQuarantine } from "../db/insertQuarantine.ts";
import { naturalKey } from "../db/naturalKey.ts";
import { recordWindow } from "../db/recordWindow.ts";
import { softDeleteMissing } from "../db/softDeleteMissing.ts";
import type { Scope } from "../db/sqlText.ts";
import { tableInfo } from "../db/tables.ts";
import { upsertRows } from "../db/upsertRows.ts";
import type { LockHandle } from "../db/withAdvisoryLock.ts";
import { parseResponse } from "../schemas/parse-response.ts";
import { LockLostError, lockedWrite } from "./db-step.ts";
import { describeError } from "./describe-error.ts";
import { toRows, writableColumns } from "./rows.ts";
import { type EngineDeps, emptyCounts, type StreamCounts, type Target, targetFields, targetLabel } from "./types.ts";
import { recordFailedWindow } from "./write-window.ts";

export async function runSnapshotTarget(
  deps: EngineDeps,
  target: Target,
  runId: number | null,
  capturedAt: number,
  abort: AbortController,
  lock?: LockHandle,
): Promise<StreamCounts> {
  const signal = deps.hardStop ? AbortSignal.any([abort.signal, deps.hardStop]) : abort.signal;
  const counts = emptyCounts();
  if (deps.stopping?.aborted) return counts;
  const label = targetLabel(target);
  const { op, stream } = target;
  deps.progress?.planned(op.id, 1);
  const capture = { start: capturedAt, end: capturedAt };
  let requests = 0;
  try {
    const res = await deps.client.call(op, { pcode: target.pcode || undefined, params: target.params, signal });
    requests = res.attempts;
    const parsed = parseResponse(op, res.body);
    const rows = toRows(target, parsed.records, { runId, capturedAt });
    const replaced = await lockedWrite(deps, lock, label, async (tx) => {
      const key = naturalKey(stream.table);
      const upserted = await upsertRows(tx, stream.table, writableColumns(tableInfo(stream.table)), key, rows);
      // Only a complete list may mark rows deleted: a quarantined record is not "gone".
      if (stream.kind === "dimension" && parsed.quarantined.length === 0) {
        await softDeleteMissing(tx, stream.table, deletionScope(target), key, rows, runId);
      }
      let quarantineReplaced = 0;
      if (parsed.quarantined.length > 0) {
        const copied = await insertQuarantine(
          tx,
          parsed.quarantined.map((q) => ({
            runId,
            stream: op.id,
            pcode: target.pcode,
            windowStart: capturedAt,
            windowEnd: capturedAt,
            recordIndex: q.index,
            raw: q.raw,
            reason: q.reason,
          })),
        );
        quarantineReplaced = copied.replaced;
      }
      await recordCapture(tx, target, capturedAt, rows.length, parsed.quarantined.length, res.attempts, runId);
      return upserted.replaced + quarantineReplaced;
    });
    counts.windows = 1;
    counts.rows = rows.length;
    counts.requests = res.attempts;
    counts.retries = res.attempts - 1;
    counts.quarantined = parsed.quarantined.length;
    counts.textReplaced = replaced;
    deps.progress?.windowDone(op.id, rows.length);
    deps.metrics?.window(target, "done", { rows: rows.length, quarantined: parsed.quarantined.length, truncated: 0 });
  } catch (e) {
    if (signal.aborted && !(e instanceof AuthError)) return counts;
    if (e instanceof LockLostError) {
      deps.logger.warn(targetFields(target), e.message);
      return { ...counts, skipped: 1 };
    }
    counts.windows = 1;
    counts.failed = 1;
    counts.requests = requests;
    const message = describeError(e);
    deps.logger.error(targetFields(target), `${targetLabel(target)}: failed: ${message}`);
    await lockedWrite(deps, lock, label, (tx) =>
      recordFailedWindow(tx, target, capture, message, { requests, retries: Math.max(0, requests - 1) }, runId),
    ).catch(() => {});
    deps.progress?.windowDone(op.id, 0);
    deps.metrics?.window(target, "failed");
    if (e instanceof AuthError) abort.abort(e);
  }
  return counts;
}

/** Which rows a complete list speaks for: one project's, one group's, or the account's. */
function deletionScope(target: Target): Scope {
  if (target.stream.fanOut === "group") return { group_key: target.partition };
  if (target.stream.fanOut === "project") return { pcode: Number(target.partition) };
  if (target.op.sendsPcode) return { pcode: target.pcode };
  return {};
}

async function recordCapture(
  tx: SqlHandle,
  target: Target,
  at: number,
  rows: number,
  quarantined: number,
  requests: number,
  runId: number | null,
) {
  await recordWindow(tx, {
    stream: target.op.id,
    pcode: target.pcode,
    partition: target.partition,
    windowStart: at,
    windowEnd: at,
    status: "done",
    rowsFetched: rows + quarantined,
    rowsWritten: rows,
    requests,
    retries: Math.max(0, requests - 1),
    quarantined,
    runId,
  });
  await clearFailedCaptures(tx, target.op.id, target.pcode, target.partition, at);
  await advanceWatermark(tx, target.op.id, target.pcode, target.partition, at);
}
