// Fetches one planned window. A window is done only when its answer proves it complete (issue 21):
// - the record cap cut the answer (records received below the stated total): split, halving on
//   the 5-minute grid down to 5 minutes; a still-cut 5-minute window is kept and marked truncated
//   with both counts, never silently (docs/design.md "Windows");
// - the answer echoes a range (`echoesWindow`) narrower than asked (etime clamped to the server's
//   clock, a stale replica): only what it covers is kept, the rest is left for the next run;
//   an echo reaching outside the window asked for cannot be filed under it: the window fails.

import type { Page } from "../api/page.ts";
import { parseEnvelope } from "../api/parse-response.ts";
import type { WaitBudget } from "../api/retry.ts";
import type { ApiClient } from "../api/types.ts";
import { SchemaDriftError } from "../schemas/errors.ts";
import type { TraceSpan } from "../tracing/tracer.ts";
import { ceilToGrid, floorToGrid, splitWindow } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import type { Target } from "./types.ts";

/** One fetched (sub-)window: its answer, whose records the write reads (window-rows.ts). */
export interface Leaf {
  readonly start: number;
  readonly end: number;
  readonly truncated: boolean;
  /** What the server said exists (null when the operation does not say). */
  readonly expected: number | null;
  /** Records the server returned (the length of its records array). */
  readonly fetched: number;
  /** The answer; disposed of by disposeLeaves once the window is written or given up. */
  readonly page: Page;
  /** Its envelope, validated (api/parse-response.ts). */
  readonly envelope: unknown;
}

/** A window answered for less than was asked: the range asked for and the range echoed. */
export interface ShortAnswer {
  readonly asked: Span;
  readonly answered: Span;
}

export interface WindowFetch {
  /** The covered parts; they tile the window unless `short` says otherwise. */
  readonly leaves: Leaf[];
  /** Requests sent (every attempt, failed ones and refused token probes included). */
  requests: number;
  retries: number;
  splits: number;
  /** The first answer that covered less than was asked; the uncovered rest is left for the next run. */
  short: ShortAnswer | null;
  /** Backoff and Retry-After waits of the window's requests together (bounded, api/retry.ts). */
  readonly waits: WaitBudget;
}

/** Aborts the window's requests; ends its waits at once (SIGTERM/SIGINT); tells the server's clock. */
export interface FetchSignals {
  readonly signal?: AbortSignal | undefined;
  readonly stopWaits?: AbortSignal | undefined;
  /** The server's now as measured from its answers (api/clock.ts); null while unknown. */
  readonly serverNow?: (() => number | null) | undefined;
  /** The window's span: its requests (split halves' too) are its children. */
  readonly span?: TraceSpan | undefined;
}

/**
 * How far a clamped echo's end may lie from the server's now as we measure it: the server serves
 * complete 5-minute cubes only, and its clock is known to a second or two (api/clock.ts).
 */
const CLAMP_TOLERANCE_MS = 5 * 60_000 + 5_000;

/** The echoed range reaches outside the window asked for: its records cannot be filed under it. */
export class EchoMismatchError extends Error {
  constructor(opId: string, asked: Span, answered: Span, why: string) {
    super(`${opId}: ${describeShort({ asked, answered })}: ${why}; nothing recorded, the window is fetched again next run`);
    this.name = "EchoMismatchError";
  }
}

export function emptyWindowFetch(): WindowFetch {
  return { leaves: [], requests: 0, retries: 0, splits: 0, short: null, waits: { waitedMs: 0 } };
}

/** Frees the answers a window holds (its records' memory or files). */
export function disposeLeaves(fetched: WindowFetch): void {
  for (const leaf of fetched.leaves) leaf.page.dispose();
}

/**
 * Fetches `window` into `out` (created by the caller, so that the requests of a window that fails
 * are still counted; the caller disposes of its leaves). Leaves end up sorted by start. A window
 * widened over stored windows of another grain is fetched part by part (windows/widen.ts
 * widenOverLedger); a part answered for less ends it, the rest is left for the next run.
 */
export async function fetchWindow(
  client: ApiClient,
  target: Target,
  window: Span & { readonly parts?: readonly Span[] | undefined },
  out: WindowFetch,
  signals: FetchSignals = {},
): Promise<void> {
  for (const part of window.parts ?? [window]) {
    await fetchInto(client, target, part, out, signals);
    if (out.short) break;
  }
  out.leaves.sort((a, b) => a.start - b.start);
}

async function fetchInto(client: ApiClient, target: Target, w: Span, out: WindowFetch, signals: FetchSignals): Promise<void> {
  let attempt = 0;
  const res = await client.call(target.op, {
    pcode: target.pcode || undefined,
    params: { ...target.params, stime: w.start, etime: w.end },
    onAttempt: () => {
      out.requests += 1;
      if (attempt++ > 0) out.retries += 1;
    },
    waits: out.waits,
    ...(signals.signal ? { signal: signals.signal } : {}),
    ...(signals.stopWaits ? { stopWaits: signals.stopWaits } : {}),
    ...(signals.span ? { span: signals.span } : {}),
  });
  const page = res.body;
  let kept = false;
  try {
    kept = await keepAnswer(client, target, w, page, out, signals);
  } finally {
    if (!kept) page.dispose();
  }
}

/**
 * Files one answer: as a leaf of the window (true), or split and fetched again in halves, or
 * covering none of it (false: the caller disposes of it).
 */
async function keepAnswer(
  client: ApiClient,
  target: Target,
  w: Span,
  page: Page,
  out: WindowFetch,
  signals: FetchSignals,
): Promise<boolean> {
  const envelope = parseEnvelope(target.op, page);
  const fields = (envelope ?? {}) as Record<string, unknown>;
  const span = target.stream.echoesWindow ? covered(target, w, fields, out, signals.serverNow?.() ?? null) : w;
  if (span === null) return false;
  const fetched = page.records.count;
  const { expected, cut } = truncation(target, fields, fetched);
  const halves = cut ? splitWindow(span) : null;
  if (halves) {
    page.dispose();
    out.splits += 1;
    // One half at a time: a split never fans out into parallel requests. The leaves' records are
    // held (within the memory budget, else in temporary files: api/spool.ts) until the grain
    // window's single transaction.
    for (const half of halves) await fetchInto(client, target, half, out, signals);
    return false;
  }
  out.leaves.push({ start: span.start, end: span.end, truncated: cut, expected, fetched, page, envelope });
  return true;
}

/**
 * The part of `asked` the echoed stime/etime prove covered, on the 5-minute grid; null when it
 * covers none of it. An etime off the grid is the clamp to the server's clock (spec statistics
 * rule 2), and the server serves complete cubes only: the cover ends at the cube boundary before it.
 * A server whose clock has not reached the window yet clamps etime below stime: told apart from
 * an answer for another range by the server's clock (`serverNow`), it covers none of the window,
 * which is left for a later run.
 */
function covered(target: Target, asked: Span, envelope: Record<string, unknown>, out: WindowFetch, serverNow: number | null): Span | null {
  const start = toMs(envelope.stime) ?? asked.start;
  const end = toMs(envelope.etime) ?? asked.end;
  if (start === asked.start && end === asked.end) return asked;
  const answered = { start, end };
  if (clampedBeforeStart(asked, answered, serverNow)) {
    out.short ??= { asked, answered };
    return null;
  }
  const fail = (why: string) => new EchoMismatchError(target.op.id, asked, answered, why);
  if (start < asked.start) throw fail("the answer starts before the window asked for");
  if (end > asked.end) throw fail("the answer ends after the window asked for");
  if (start > end) throw fail("the answer ends before it starts");
  if (start !== ceilToGrid(start)) throw fail("the answer starts off the 5-minute grid, inside a cube");
  out.short ??= { asked, answered };
  const cover = { start, end: floorToGrid(end) };
  return cover.end > cover.start ? cover : null;
}

/**
 * The echo of a server whose clock had not reached the window's start: etime clamped to its now,
 * below stime (and stime perhaps with it). Only where the server's clock, as measured, is before
 * the window's start and the echoed end is that clock: any other echo outside the window is an
 * answer for another range, and fails the window.
 */
function clampedBeforeStart(asked: Span, answered: Span, serverNow: number | null): boolean {
  if (serverNow === null || serverNow >= asked.start + CLAMP_TOLERANCE_MS) return false;
  const near = (t: number) => Math.abs(t - serverNow) <= CLAMP_TOLERANCE_MS;
  return answered.end < asked.start && near(answered.end) && (answered.start === asked.start || near(answered.start));
}

/** "asked A..B, answered C..D" in ISO times. */
export function describeShort(s: ShortAnswer): string {
  return `asked ${iso(s.asked.start)}..${iso(s.asked.end)}, answered ${iso(s.answered.start)}..${iso(s.answered.end)}`;
}

/**
 * What the server says exists, and whether the answer is short of it: fewer records received
 * than the stated total (the record cap, or a count the records do not bear out). More records
 * than the total is a lie the window cannot be recorded on.
 */
function truncation(target: Target, envelope: Record<string, unknown>, fetched: number): { expected: number | null; cut: boolean } {
  if (!target.stream.truncation) return { expected: null, cut: false };
  const total = toNum(envelope.total);
  if (total !== null && fetched > total)
    throw new SchemaDriftError(target.op.id, new Error("count"), `${fetched} records received for a stated total of ${total}`);
  return { expected: total, cut: total !== null && total > fetched };
}

function toNum(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function toMs(v: unknown): number | null {
  if (v instanceof Date) return v.getTime();
  return toNum(v);
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}
