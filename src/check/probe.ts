// One probe of `apm-sync check`: one request of one operation for one project (or the account),
// parsed like sync would parse it, nothing written. The outcome says what a sync would meet.

import { ApiError, AuthError, HttpStatusError, TlsError } from "../api/errors.ts";
import { type ParsedResponse, parseResponse } from "../api/parse-response.ts";
import type { ApiClient } from "../api/types.ts";
import type { OperationDef, TokenKind } from "../catalogue/types.ts";
import type { Row } from "../db/write/row.ts";
import { ADVICE, describeError, isUnreachable, splitAdvice } from "../engine/describe-error.ts";
import { toRows } from "../engine/rows.ts";
import type { Target } from "../engine/types.ts";
import type { Span } from "../windows/intervals.ts";

export type ProbeStatus = "ok" | "auth" | "not-found" | "error" | "skipped";

/** Schema drift seen in one answer: fields that would land in `extra`, records that would be quarantined. */
export interface Drift {
  readonly unknownFields: readonly string[];
  readonly quarantined: number;
  /** Why the first quarantined record failed its schema. */
  readonly firstReason: string | null;
}

/** The outcome of one probe; never holds a credential (API error messages are redacted). */
export interface ProbeResult {
  readonly id: string;
  /** null for account operations. */
  readonly pcode: number | null;
  /** The project code or group key a fan-out operation was probed for. */
  readonly partition: string | null;
  readonly status: ProbeStatus;
  /** The token the server accepted. */
  readonly token: TokenKind | null;
  readonly httpStatus: number | null;
  /** Records the server returned (before quarantine and before series are flattened into points). */
  readonly records: number | null;
  /** Send to answer of the request that answered (the rate governor's wait left out); null when none did. */
  readonly ms: number | null;
  readonly message: string | null;
  readonly drift: Drift | null;
}

/** A probe result plus the rows it parsed (fan-out operations pick their partition from them). */
export interface Probed {
  readonly result: ProbeResult;
  readonly rows: readonly Row[];
  /**
   * The server could not be reached at all, after the client's retries: no connection, or its
   * certificate refused. Every other probe would meet the same, each with its retries and backoff.
   */
  readonly unreachable: "connect" | "tls" | null;
}

/** Probes `target` once; a windowed operation asks for `window`. Never throws for API trouble. */
export async function probeTarget(client: ApiClient, target: Target, window: Span | null, now: number): Promise<Probed> {
  const { op } = target;
  const base = { id: op.id, pcode: op.sendsPcode ? target.pcode : null, partition: target.partition || null };
  try {
    const params = op.windowLimitMs === null || !window ? target.params : { ...target.params, stime: window.start, etime: window.end };
    const res = await client.call(op, { pcode: target.pcode || undefined, params });
    // A probe's answer is the latest 5 minutes (or a list): parsed whole.
    let parsed: ParsedResponse;
    try {
      parsed = parseResponse(op, res.body);
    } finally {
      res.body.dispose();
    }
    const ctx =
      op.windowLimitMs === null || !window
        ? { runId: null, capturedAt: now }
        : { runId: null, windowStart: window.start, windowEnd: window.end };
    const rows = toRows(target, parsed.records, ctx);
    const drift = driftOf(parsed);
    const result = { ...base, status: "ok" as const, token: res.token, httpStatus: res.status, records: countRecords(op, parsed) };
    return { result: { ...result, ms: res.sendMs, message: null, drift }, rows, unreachable: null };
  } catch (e) {
    const unreachable = e instanceof TlsError ? "tls" : isUnreachable(e) ? "connect" : null;
    return { result: { ...base, ...classify(op, e), token: null, records: null, ms: null, drift: null }, rows: [], unreachable };
  }
}

/** A probe not sent, and why: `skipped`, or `error` when an earlier probe could not reach the server. */
export function skipped(op: OperationDef, pcode: number | null, message: string, status: "skipped" | "error" = "skipped"): ProbeResult {
  const partition = null;
  return { id: op.id, pcode, partition, status, token: null, httpStatus: null, records: null, ms: null, message, drift: null };
}

function classify(op: OperationDef, e: unknown): { status: ProbeStatus; httpStatus: number | null; message: string } {
  if (e instanceof AuthError) return { status: "auth", httpStatus: e.status ?? null, message: authMessage(e) };
  if (e instanceof HttpStatusError && e.status === 404) return { status: "not-found", httpStatus: 404, message: notFound(op, e) };
  const httpStatus = e instanceof HttpStatusError ? e.status : null;
  const line = e instanceof ApiError ? withoutWhere(e, describeError(e)) : describeError(e);
  // The advice of a failed window is about the next sync run; a host nobody answers on is
  // advised once for the whole check (advice.ts).
  const { error, advice } = splitAdvice(line);
  return { status: "error", httpStatus, message: advice && !SYNC_ADVICE.has(advice) && !isUnreachable(e) ? line : error };
}

// What describeError advises about a failed window's next run: no advice for a probe.
const SYNC_ADVICE = new Set<string>([ADVICE.transport, ADVICE.schemaDrift]);

/**
 * Short and the same for every operation of a project that the token fails on, so the table can
 * say it once. A request never sent (no token configured) keeps the client's own explanation.
 */
function authMessage(e: AuthError): string {
  if (e.attempt === 0 && e.refused.length === 0) return withoutWhere(e);
  const who = e.pcode !== undefined ? `the token of project ${e.pcode}` : "the account token";
  const which = e.refused.length > 0 ? e.refused.map((k) => `the ${k} token`).join(" and ") : who;
  return `refused${e.status ? ` (HTTP ${e.status})` : ""}: check ${which} and the header names`;
}

/** The operations whose method and path the spec leaves open name the config key that moves them. */
function notFound(op: OperationDef, e: HttpStatusError): string {
  const answered = `${e.path} answered 404`;
  if (!op.overridable) return answered;
  const example = JSON.stringify({ overrides: { [op.id]: { method: op.method, path: op.path } } });
  return `${answered}; the spec leaves this operation's method and path open: set overrides["${op.id}"] in the config file, e.g. ${example}`;
}

/** The error text without its ` [op (project) path]` suffix: the table already says where. */
function withoutWhere(e: ApiError, text = e.message): string {
  const where = ` [${e.opId}${e.pcode !== undefined ? ` (project ${e.pcode})` : ""} ${e.path}]`;
  return text.replace(where, "");
}

/**
 * Drift against the schema: the fields the record schema does not know (its `extra`), not the
 * known ones a table keeps in `extra` by design (project.detail's project_code).
 */
function driftOf(parsed: ParsedResponse): Drift {
  const unknown = new Set<string>();
  for (const record of parsed.records) {
    const extra = (record as { extra?: unknown }).extra;
    if (extra && typeof extra === "object") for (const key of Object.keys(extra)) unknown.add(key);
  }
  return { unknownFields: [...unknown].sort(), quarantined: parsed.quarantined.length, firstReason: parsed.quarantined[0]?.reason ?? null };
}

/** What the server sent: a single-record operation counts 1, a list its length, no data 0. */
function countRecords(op: OperationDef, parsed: ParsedResponse): number {
  if (parsed.envelope === null) return 0;
  if (!op.records) return 1;
  const { at } = op.records;
  const list = at === null ? parsed.envelope : (parsed.envelope as Record<string, unknown>)[at];
  return Array.isArray(list) ? list.length : parsed.records.length + parsed.quarantined.length;
}
