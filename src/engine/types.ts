import type { ApiClient } from "../api/types.ts";
import type { OperationDef, RequestParams, StreamSpec } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/driver/connect.ts";
import type { Tracer } from "../tracing/tracer.ts";
import type { Logger } from "../util/logger.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";
import type { ProgressSink } from "./progress.ts";

/** Everything the engine needs, passed in (docs/design.md "Data flow": nothing below the jobs reads clock or env). */
export interface EngineDeps {
  readonly config: Config;
  readonly client: ApiClient;
  readonly database: Database;
  readonly logger: Logger;
  readonly now: () => number;
  readonly progress?: ProgressSink;
  /** Set on SIGTERM/SIGINT: take no new window; windows in flight finish. */
  readonly stopping?: AbortSignal;
  /** Set when the shutdown grace is over: windows still in flight are abandoned (rolled back). */
  readonly hardStop?: AbortSignal;
  /** Counts windows and runs for Prometheus (src/metrics); none when absent. */
  readonly metrics?: MetricsObserver;
  /** Spans of the run, its targets and windows (src/tracing); none when absent. */
  readonly tracer?: Tracer;
}

/** One unit of work: a stream of one project (or of the account), in one partition. */
export interface Target {
  readonly op: OperationDef;
  readonly stream: StreamSpec;
  /** 0 for account-level streams. */
  readonly pcode: number;
  /** '' unless the stream fans out (project code or group key). */
  readonly partition: string;
  /** Request parameters besides the window (projectCode, groupKey...). */
  readonly params: RequestParams;
}

/**
 * A sync, or a backfill of [from, to). A backfill fetches every window of the range unless
 * `onlyMissing`, which leaves out the grain windows the ledger has complete: what `apm-sync backfill`
 * and a queued backfill do (unless --refetch), so that running it again resumes it.
 */
export type RunMode =
  | { readonly kind: "sync" }
  | { readonly kind: "backfill"; readonly from: number; readonly to: number; readonly onlyMissing?: boolean };

/** Counters of one target, summed per stream for the run summary. */
export interface StreamCounts {
  windows: number;
  rows: number;
  requests: number;
  retries: number;
  splits: number;
  truncated: number;
  quarantined: number;
  failed: number;
  skipped: number;
  /** Windows the server answered short (its clock behind their end): left for the next run. */
  deferred: number;
  /** Values stored with U+FFFD for text the database cannot hold (NUL, unpaired surrogates). */
  textReplaced: number;
}

export function emptyCounts(): StreamCounts {
  return {
    windows: 0,
    rows: 0,
    requests: 0,
    retries: 0,
    splits: 0,
    truncated: 0,
    quarantined: 0,
    failed: 0,
    skipped: 0,
    deferred: 0,
    textReplaced: 0,
  };
}

export function addCounts(into: StreamCounts, from: Readonly<StreamCounts>): void {
  for (const k of Object.keys(into) as (keyof StreamCounts)[]) into[k] += from[k];
}

/** Adds `counts` to the running total of `stream`. */
export function addToTotals(totals: Map<string, StreamCounts>, stream: string, counts: Readonly<StreamCounts>): void {
  const sum = totals.get(stream) ?? emptyCounts();
  addCounts(sum, counts);
  totals.set(stream, sum);
}

/** Name of a target's advisory lock (with its pcode): the stream, and the partition when it is not the project. */
export function streamLockName(stream: string, partition: string, pcode: number): string {
  return partition && String(pcode) !== partition ? `${stream}:${partition}` : stream;
}

/** Identifies a target in logs and errors (never holds a secret). */
export function targetLabel(t: Target): string {
  return `${t.op.id}${t.pcode ? ` pcode=${t.pcode}` : ""}${t.partition && String(t.pcode) !== t.partition ? ` [${t.partition}]` : ""}`;
}

/** A target as log fields (`--log-format json`): stream, pcode, partition. */
export function targetFields(t: Target): { stream: string; pcode: number; partition?: string } {
  return { stream: t.op.id, pcode: t.pcode, ...(t.partition ? { partition: t.partition } : {}) };
}

/** A window as log fields, ISO times. */
export function windowFields(w: { readonly start: number; readonly end: number }): { windowStart: string; windowEnd: string } {
  return { windowStart: new Date(w.start).toISOString(), windowEnd: new Date(w.end).toISOString() };
}

/** What a run (or a queued job) asks the engine to do. */
export interface JobRequest {
  readonly command: "sync" | "backfill";
  readonly mode: RunMode;
  readonly streams?: readonly string[] | null;
  readonly projects?: readonly number[] | null;
  /** Only this partition of each selected stream (a queued job's); default: every partition. */
  readonly partition?: string | null;
  /** Which parts run (default both): the account streams (sync only), the project streams. */
  readonly parts?: { readonly account: boolean; readonly projects: boolean };
  /** Recorded in sync_runs (never secrets). */
  readonly args?: Readonly<Record<string, unknown>>;
}
