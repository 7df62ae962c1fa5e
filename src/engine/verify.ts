// `apm-sync verify`: proves the copy still equals the server. The windows the ledger holds done in
// a range (all, or a sample spread evenly) are fetched again a few at a time and compared with the
// stored rows (verify-window.ts); nothing changes but one verifications row. Only aggregate
// streams (statistics, range records) are verified: their window is replaced whole and has a
// digest; points streams are upserted by key, and are named as not verified.
import { isAccountStream, isWindowed } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { readLedger } from "../db/ledger/readLedger.ts";
import { recordVerification } from "../db/ledger/verifications.ts";
import type { Span } from "../windows/intervals.ts";
import { dbStep } from "./db-step.ts";
import { projectTargetsOf, selectOperations, selectProjects } from "./targets.ts";
import type { EngineDeps, Target } from "./types.ts";
import { verifyWindow, type WindowCheck } from "./verify-window.ts";

export interface VerifyRequest {
  readonly from: number;
  readonly to: number;
  readonly streams: readonly string[] | null;
  readonly projects: readonly number[] | null;
  /** Verify this many of the windows, spread evenly over them; null: all. */
  readonly sample: number | null;
}

export interface VerifyResult {
  /** Done windows of the range and selection (before the sample). */
  readonly held: number;
  readonly checked: number;
  readonly agreeing: number;
  /** The windows that differ and those that could not be fetched, in window order. */
  readonly differing: WindowCheck[];
  readonly failed: WindowCheck[];
  /** Windowed points streams of the selection, not verified. */
  readonly notVerified: string[];
  /** A stop (SIGINT/SIGTERM) ended it before every window was checked. */
  readonly stopped: boolean;
  readonly verificationId: number;
}

/** The aggregate streams' targets of the selection, and the windowed streams that cannot be verified. */
export function verifyTargets(config: Config, streams: readonly string[] | null, projects: readonly number[] | null) {
  const ops = selectOperations(streams ?? config.sync.streams, config.sync.inputs).filter(
    (op) => isWindowed(op.stream!) && !isAccountStream(op),
  );
  const aggregates = ops.filter((op) => op.stream!.kind === "aggregate");
  const notVerified = ops.filter((op) => op.stream!.kind !== "aggregate").map((op) => op.id);
  return { targets: projectTargetsOf(config, aggregates, selectProjects(config, projects)), notVerified };
}

interface Piece {
  readonly target: Target;
  readonly window: Span;
}

export async function verifyCopy(deps: EngineDeps, req: VerifyRequest): Promise<VerifyResult> {
  const startedAt = deps.now();
  const { targets, notVerified } = verifyTargets(deps.config, req.streams, req.projects);
  const held = await donePieces(deps, targets, req);
  const pieces = evenly(held, req.sample);
  for (const p of pieces) deps.progress?.planned(p.target.op.id, 1);
  deps.progress?.allPlanned();
  const checks: WindowCheck[] = [];
  let next = 0;
  const worker = async () => {
    while (next < pieces.length && !deps.stopping?.aborted) {
      const { target, window } = pieces[next++]!;
      const check = await verifyWindow(deps, target, window, deps.hardStop);
      checks.push(check);
      if (check.outcome === "failed") deps.progress?.windowFailed(target.op.id);
      else deps.progress?.windowDone(target.op.id, check.served?.rows ?? 0);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, deps.config.sync.windowConcurrency) }, worker));
  const stopped = checks.length < pieces.length;
  const order = (a: WindowCheck, b: WindowCheck) => a.window.start - b.window.start || a.target.op.id.localeCompare(b.target.op.id);
  const differing = checks.filter((c) => c.outcome === "differ").sort(order);
  const failed = checks.filter((c) => c.outcome === "failed").sort(order);
  const compared = checks.length - failed.length;
  const args = { streams: req.streams, projects: req.projects, sample: req.sample, ...(stopped ? { stopped: true } : {}) };
  const verification = {
    from: req.from,
    to: req.to,
    args,
    checked: compared,
    differing: differing.length,
    failed: failed.length,
    startedAt,
  };
  const verificationId = await dbStep(deps, "the record of the verification", () => recordVerification(deps.database.sql, verification));
  return {
    held: held.length,
    checked: compared,
    agreeing: compared - differing.length,
    differing,
    failed,
    notVerified,
    stopped,
    verificationId,
  };
}

/** The ledger's done windows of the targets overlapping the range, each as the one request it was, by start. */
async function donePieces(deps: EngineDeps, targets: readonly Target[], req: VerifyRequest): Promise<Piece[]> {
  const pieces: Piece[] = [];
  for (const target of targets) {
    const { op, pcode, partition } = target;
    const ledger = await dbStep(deps, "the ledger", () =>
      readLedger(deps.database.sql, { stream: op.id, pcode, partition, from: req.from, to: req.to }),
    );
    for (const e of ledger) if (e.status === "done") pieces.push({ target, window: { start: e.windowStart, end: e.windowEnd } });
  }
  return pieces.sort((a, b) => a.window.start - b.window.start || a.target.op.id.localeCompare(b.target.op.id));
}

/** `n` of `items` spread evenly over them, the first included; all of them when n is null or not less. */
export function evenly<T>(items: readonly T[], n: number | null): T[] {
  if (n === null || n >= items.length) return [...items];
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]!);
}
