// A hostile or broken server (issue 21): the lies and the misbehaviour a real server has been
// seen to send, on top of the sandbox's honest answers, so that tests and the demo can show what
// the client does with each. The ground truth never changes: it is what the server holds, not
// what it said. Which request gets the modes is a pure function of (seed, request counter).
import type { OperationDef } from "../catalogue/types.ts";
import { json, type Reply } from "./context.ts";
import { COUNT_FIELD, NATURAL_KEYS } from "./keys.ts";
import { restate } from "./restate.ts";
import { mix } from "./rng.ts";

/** The modes, in precedence order: where two would replace the same thing, the earlier one wins. */
export const HOSTILE_MODES = [
  // Answered before the request is handled.
  "retry-after", // 503 with a Retry-After in seconds (retryAfterS)
  "retry-after-date", // 503 with a Retry-After as an HTTP date, retryAfterS ahead
  "redirect", // 307 to another host (Location), which a client must not follow with its token
  // A 200 whose body is not the answer.
  "gzip-bomb", // Content-Encoding gzip nobody asked for: 64 MiB of NULs in 64 KiB
  "deflate-bomb", // the same with deflate
  "empty-body", // nothing
  "null-body", // null
  "array-body", // []
  "string-body", // "ok"
  // Another window than the one asked for (statistics: the envelope echoes stime/etime).
  "echo-short", // the first half only, echoed as such (a stale replica)
  "echo-late-start", // the second half only, echoed as such
  "echo-earlier", // a window half its length earlier
  "echo-later", // a window half its length later
  // Count lies.
  "count-lie", // half the records, `total` (and `retrievedTotal`) unchanged
  "total-below-retrieved", // total = retrievedTotal - 1
  "negative-total", // total = -1
  // What the server holds changed since it last answered (restate.ts).
  "restate", // the first record revised: count + 1, agent inactive, warning threshold + 10
  // What the spec leaves open answered the other way: the types of the v2 statistics' fields are
  // not given, and the docs' samples send numbers both bare and quoted ("600.0", "240.79").
  "numbers-as-text", // every number of every record as its decimal text
  // Values a database or a parser chokes on.
  "nul", // U+0000 inside the text fields (keys excepted) and in an unknown field (-> extra)
  "surrogate", // a lone surrogate (U+D800) in the same places
  "bad-record", // the first record's count is "n/a" (it must be quarantined)
  "deep-record", // the first record carries a 5,000-deep array
  "overflow", // the first record carries 1e400 (beyond a double)
  // A time outside the window asked for (a write must still find its month's partition).
  "stray-time", // the first event's eventTime 400 days earlier (event history)
  "stray-time-later", // the first event's eventTime 400 days later (in the future)
  // The body trickles, one byte per trickleMs, and never ends (any path, the clock probe too).
  "trickle",
  // The same from the first byte: the status line and headers trickle too (never complete).
  "trickle-head",
] as const;

export type HostileMode = (typeof HOSTILE_MODES)[number];

export interface HostileOptions {
  readonly modes: readonly HostileMode[];
  /**
   * Operation ids the modes apply to: exact, or a prefix ending in `*` (`stat.*`); `probe` is any
   * request that matches no operation (the client's clock probe of the base URL). Default: all.
   */
  readonly ops?: readonly string[];
  /** Fraction of the matching requests that get the modes (default 1). */
  readonly rate?: number;
  /** Retry-After of the retry-after modes, seconds (default 120). */
  readonly retryAfterS?: number;
  /** Interval between the bytes of a trickling body, ms (default 1000). */
  readonly trickleMs?: number;
}

const TWO32 = 4294967296;
const STRAY_MS = 400 * 24 * 3_600_000;

/** The modes request `n` of operation `opId` (null: no operation matched) gets. */
export function hostileModesFor(h: HostileOptions | null, seed: number, n: number, opId: string | null): HostileMode[] {
  if (!h || h.modes.length === 0) return [];
  const id = opId ?? "probe";
  const ops = h.ops ?? ["*"];
  if (!ops.some((p) => (p.endsWith("*") ? id.startsWith(p.slice(0, -1)) : id === p))) return [];
  const rate = h.rate ?? 1;
  if (rate < 1 && mix(seed, n, "hostile") / TWO32 >= rate) return [];
  return HOSTILE_MODES.filter((m) => h.modes.includes(m));
}

/** Parses `--hostile a,b`; throws naming the known modes. */
export function parseHostileModes(text: string): HostileMode[] {
  const modes = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = modes.filter((m) => !(HOSTILE_MODES as readonly string[]).includes(m));
  if (bad.length > 0) throw new Error(`unknown hostile mode(s): ${bad.join(", ")} (known: ${HOSTILE_MODES.join(", ")})`);
  return modes as HostileMode[];
}

const ECHO_MODES = ["echo-short", "echo-late-start", "echo-earlier", "echo-later"] as const;
const CUBE = 5 * 60_000;

/** The window the server answers instead of [stime, etime) (echo modes), on the 5-minute grid. */
export function hostileWindow(modes: readonly HostileMode[], op: OperationDef, stime: number, etime: number): [number, number] {
  const mode = ECHO_MODES.find((m) => modes.includes(m));
  if (!mode || op.area !== "stats" || etime - stime < 2 * CUBE) return [stime, etime];
  const half = Math.max(CUBE, Math.floor((etime - stime) / 2 / CUBE) * CUBE);
  switch (mode) {
    case "echo-short":
      return [stime, stime + half];
    case "echo-late-start":
      return [stime + half, etime];
    case "echo-earlier":
      return [stime - half, etime - half];
    case "echo-later":
      return [stime + half, etime + half];
  }
}

const REPLACED_BODIES: Partial<Record<HostileMode, string>> = {
  "empty-body": "",
  "null-body": "null",
  "array-body": "[]",
  "string-body": '"ok"',
};

// Placeholders swapped for text JSON.stringify cannot write (or would overflow its stack on).
const DEEP = "__sandbox_deep_array__";
const OVERFLOW = "__sandbox_overflow__";
const DEEP_TEXT = `${"[".repeat(5000)}${"]".repeat(5000)}`;

/** The 200 answer with the data lies of `modes` told; `value` is the honest answer (not changed). */
export function hostileJson(value: unknown, modes: readonly HostileMode[], op: OperationDef): Reply {
  const replaced = modes.map((m) => REPLACED_BODIES[m]).find((b) => b !== undefined);
  if (replaced !== undefined) return { ...json(null), body: replaced };
  const lied = lie(structuredClone(value), modes, op);
  const text = JSON.stringify(lied).replace(`"${DEEP}"`, DEEP_TEXT).replace(`"${OVERFLOW}"`, "1e400");
  return { ...json(null), body: text };
}

function lie(value: unknown, modes: readonly HostileMode[], op: OperationDef): unknown {
  const envelope = isObject(value) ? value : null;
  const at = op.records?.at;
  const list = at === null ? value : at !== undefined && envelope ? envelope[at] : undefined;
  const records = Array.isArray(list) ? (list as unknown[]).filter(isObject) : [];
  if (envelope && Array.isArray(list)) lieAboutCounts(envelope, at!, list, modes);
  const keys = new Set(NATURAL_KEYS[op.id] ?? []);
  for (const [mode, bad] of [
    ["nul", "\u0000"],
    ["surrogate", "\ud800"],
  ] as const) {
    if (!modes.includes(mode)) continue;
    for (const r of records) {
      for (const [k, v] of Object.entries(r)) if (typeof v === "string" && !keys.has(k) && v.length > 0) r[k] = spliceIn(v, bad);
      r[`${mode}Note`] = `java${bad}string`;
    }
  }
  if (modes.includes("numbers-as-text"))
    for (const r of records) for (const [k, v] of Object.entries(r)) if (typeof v === "number") r[k] = String(v);
  const first = records[0];
  if (first && modes.includes("bad-record")) first[COUNT_FIELD[op.id] ?? firstNumberField(first) ?? "count"] = "n/a";
  if (first && modes.includes("deep-record")) first.nested = DEEP;
  if (first && modes.includes("overflow")) first.huge = OVERFLOW;
  if (first && modes.includes("restate")) restate(first, op);
  if (first && typeof first.eventTime === "number") {
    if (modes.includes("stray-time")) first.eventTime -= STRAY_MS;
    if (modes.includes("stray-time-later")) first.eventTime += STRAY_MS;
  }
  return value;
}

function lieAboutCounts(envelope: Record<string, unknown>, at: string, list: unknown[], modes: readonly HostileMode[]): void {
  if (modes.includes("count-lie")) envelope[at] = list.slice(0, Math.floor(list.length / 2));
  if (!("total" in envelope)) return;
  if (modes.includes("total-below-retrieved")) envelope.total = Number(envelope.retrievedTotal ?? list.length) - 1;
  if (modes.includes("negative-total")) envelope.total = -1;
}

function spliceIn(text: string, bad: string): string {
  const mid = Math.floor(text.length / 2);
  return `${text.slice(0, mid)}${bad}${text.slice(mid)}`;
}

function firstNumberField(r: Record<string, unknown>): string | undefined {
  return Object.keys(r).find((k) => typeof r[k] === "number");
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
