// Fetches one planned window, splitting it while the record cap cut the answer (DESIGN.md
// "Truncation"): halves on the 5-minute grid down to 5 minutes; a still-cut 5-minute window is
// kept and marked truncated with both counts, never silently.

import type { ApiClient } from "../api/client.ts";
import { parseResponse, type QuarantinedRecord } from "../schemas/parse-response.ts";
import type { Span } from "../windows/intervals.ts";
import { splitWindow } from "../windows/plan.ts";
import type { Target } from "./types.ts";

/** One fetched (sub-)window. */
export interface Leaf {
  readonly start: number;
  readonly end: number;
  readonly truncated: boolean;
  /** What the server said exists (null when the operation does not say). */
  readonly expected: number | null;
  /** Records the server returned (valid + quarantined, before flattening). */
  readonly fetched: number;
  readonly records: unknown[];
  readonly quarantined: QuarantinedRecord[];
}

export interface WindowFetch {
  readonly leaves: Leaf[];
  requests: number;
  retries: number;
  splits: number;
}

/** The server answered for less than was asked: the window is not complete (clamped etime). */
export class IncompleteWindowError extends Error {
  constructor(
    readonly askedEnd: number,
    readonly answeredEnd: number,
  ) {
    super(
      `server answered up to ${new Date(answeredEnd).toISOString()} for a window ending ${new Date(askedEnd).toISOString()} (etime clamped to its clock)`,
    );
    this.name = "IncompleteWindowError";
  }
}

export async function fetchWindow(client: ApiClient, target: Target, window: Span, signal?: AbortSignal): Promise<WindowFetch> {
  const out: WindowFetch = { leaves: [], requests: 0, retries: 0, splits: 0 };
  await fetchInto(client, target, window, out, signal);
  out.leaves.sort((a, b) => a.start - b.start);
  return out;
}

async function fetchInto(client: ApiClient, target: Target, w: Span, out: WindowFetch, signal?: AbortSignal): Promise<void> {
  const res = await client.call(target.op, {
    pcode: target.pcode || undefined,
    params: { ...target.params, stime: w.start, etime: w.end },
    ...(signal ? { signal } : {}),
  });
  out.requests += res.attempts;
  out.retries += res.attempts - 1;
  const parsed = parseResponse(target.op, res.body);
  const envelope = (parsed.envelope ?? {}) as Record<string, unknown>;
  if (target.stream.echoesWindow) {
    const answeredEnd = toMs(envelope.etime);
    if (answeredEnd !== null && answeredEnd < w.end) throw new IncompleteWindowError(w.end, answeredEnd);
  }
  // Truncation streams do not flatten records, so this is the server's own record count.
  const fetched = parsed.records.length + parsed.quarantined.length;
  const { expected, cut } = truncation(target, envelope, fetched);
  const halves = cut ? splitWindow(w) : null;
  if (halves) {
    out.splits += 1;
    // One half at a time: a split never fans out into parallel requests. The leaves are held
    // until the grain window's single transaction, so memory is bounded by one grain window.
    for (const half of halves) await fetchInto(client, target, half, out, signal);
    return;
  }
  out.leaves.push({
    start: w.start,
    end: w.end,
    truncated: cut,
    expected,
    fetched,
    records: parsed.records,
    quarantined: parsed.quarantined,
  });
}

/** What the server says exists, and whether the record cap cut this answer. */
function truncation(target: Target, envelope: Record<string, unknown>, fetched: number): { expected: number | null; cut: boolean } {
  const total = toNum(envelope.total);
  switch (target.stream.truncation) {
    case "retrievedTotal": {
      const retrieved = toNum(envelope.retrievedTotal) ?? fetched;
      return { expected: total, cut: total !== null && total > retrieved };
    }
    case "total":
      return { expected: total, cut: total !== null && total > fetched };
    default:
      return { expected: null, cut: false };
  }
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
