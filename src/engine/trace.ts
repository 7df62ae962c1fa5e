// The engine's spans (src/tracing): the run (or a queued job's share of one), each target (a
// stream of one project, in one partition), each window or snapshot capture; the API client adds
// one per HTTP request under its window. Attributes are apm.*: stream, project, window bounds,
// counts. A target holds no token, and the tracer masks every string besides.
import { isoAttribute, NO_TRACER, type TraceAttributes, type Tracer, type TraceSpan } from "../tracing/tracer.ts";
import type { Span } from "../windows/intervals.ts";
import { addCounts, type EngineDeps, emptyCounts, type StreamCounts, type Target } from "./types.ts";

export function tracerOf(deps: Pick<EngineDeps, "tracer">): Tracer {
  return deps.tracer ?? NO_TRACER;
}

/** What a run or a job was asked to do. */
export function requestAttributes(req: {
  readonly command: string;
  readonly mode: { readonly kind: string; readonly from?: number; readonly to?: number };
  readonly streams?: readonly string[] | null;
  readonly projects?: readonly number[] | null;
  readonly partition?: string | null;
}): TraceAttributes {
  const { mode } = req;
  return {
    "apm.command": req.command,
    "apm.from": mode.from !== undefined ? isoAttribute(mode.from) : undefined,
    "apm.to": mode.to !== undefined ? isoAttribute(mode.to) : undefined,
    "apm.streams": req.streams?.join(","),
    "apm.projects": req.projects?.join(","),
    "apm.partition": req.partition ?? undefined,
  };
}

export function targetAttributes(t: Target): TraceAttributes {
  return { "apm.stream": t.op.id, "apm.pcode": t.pcode, "apm.partition": t.partition || undefined };
}

/** A window's span (a capture's: start = end), child of its target's. */
export function startWindowSpan(deps: EngineDeps, t: Target, w: Span, parent: TraceSpan): TraceSpan {
  return tracerOf(deps).startSpan("window", { ...targetAttributes(t), ...windowAttributes(w) }, parent);
}

/** A window span's bounds (a capture's move to its time once its answer arrived). */
export function windowAttributes(w: Span): TraceAttributes {
  return { "apm.window.start": isoAttribute(w.start), "apm.window.end": isoAttribute(w.end) };
}

/** What a window's requests came to (requests counts every attempt; retries the attempts after a first). */
export function requestCounts(sent: { readonly requests: number; readonly retries: number }): TraceAttributes {
  return { "apm.requests": sent.requests, "apm.retries": sent.retries };
}

/** A target's or a run's counters; the span fails when some window did. */
export function noteCounts(span: TraceSpan, c: Readonly<StreamCounts>): void {
  span.setAttributes({
    "apm.windows": c.windows,
    "apm.rows": c.rows,
    ...requestCounts(c),
    "apm.splits": c.splits,
    "apm.failed": c.failed,
    "apm.deferred": c.deferred,
    "apm.quarantined": c.quarantined,
    "apm.skipped": c.skipped > 0 ? true : undefined,
  });
  if (c.failed > 0) span.fail(`${c.failed} window(s) failed`);
}

/** How a run (or a job) ended: its counters summed over streams; it fails when the server could not be reached. */
export function noteRun(span: TraceSpan, totals: ReadonlyMap<string, StreamCounts>, cancelled: boolean, unreachable: string | null): void {
  const sum = emptyCounts();
  for (const c of totals.values()) addCounts(sum, c);
  noteCounts(span, sum);
  span.setAttributes({ "apm.cancelled": cancelled || undefined });
  if (unreachable) span.fail(unreachable);
}
