// Durations and times as people write them (settings, --from, --to, --chunk): one parser each, and
// every value bounded where it is declared. A duration says its unit: a bare 7 used to mean 7 ms to
// some settings and nothing to others. A time is bounded too: an absurd one used to load and end
// in a Postgres error (22009) or a plan of millions of windows.
import { z } from "zod";
import { DAY, HOUR, MINUTE } from "../catalogue/types.ts";
import { parseUtcTime } from "../util/time.ts";

export const SECOND = 1000;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };
const DURATION = /^(\d+)\s*(ms|s|m|h|d)$/;
/** The API's grid: window sizes are whole steps of it. */
const GRID = 5 * MINUTE;

/** A timer's longest wait: Node's timers hold at most 2^31 - 1 ms (24.8 days), a longer one fires after 1 ms. */
export const TIMER_MAX = DAY;
/** The longest lookback or settle (about ten years): a start further back is before any data. */
export const LONG_MAX = 3650 * DAY;

/** What a duration may be, in ms; `grid`: whole 5-minute steps (window sizes). */
export interface DurationBounds {
  readonly min: number;
  readonly max: number;
  readonly grid?: boolean;
}

export type Read = { readonly ms: number } | { readonly problem: string };

const show = (v: unknown) => JSON.stringify(v);

/** `2h` for 7,200,000: in the largest unit that divides it. */
function formatDuration(ms: number): string {
  if (ms === 0) return "0";
  const unit = ["d", "h", "m", "s"].find((u) => ms % UNIT_MS[u]! === 0);
  return unit ? `${ms / UNIT_MS[unit]!}${unit}` : `${ms}ms`;
}

/** `500ms`, `30s`, `10m`, `1h`, `7d` (a bare `0` needs no unit) in ms, within `bounds`. */
export function readDuration(value: string | number, bounds: DurationBounds): Read {
  const text = String(value).trim();
  const m = DURATION.exec(text);
  if (!m && !/^0+$/.test(text))
    return {
      problem: /^\d+$/.test(text)
        ? `say a unit: ${text}s, ${text}m, ${text}h or ${text}d (a bare number has none), got ${show(value)}`
        : `expected a duration like 30s, 10m, 1h or 7d, got ${show(value)}`,
    };
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : 0;
  if (bounds.grid && (ms <= 0 || ms % GRID !== 0))
    return { problem: `must be a positive multiple of 5 minutes (5m, 30m, 1h, 1d), got ${show(value)}` };
  if (ms < bounds.min) return { problem: `must be at least ${formatDuration(bounds.min)}, got ${show(value)}` };
  if (ms > bounds.max) return { problem: `must be at most ${formatDuration(bounds.max)}, got ${show(value)}` };
  return { ms };
}

/** A duration setting within `bounds`, as text or a JSON number (which must be 0: a number has no unit). */
export function duration(bounds: DurationBounds) {
  return z.union([z.string(), z.number()]).transform((v, ctx) => {
    const read = readDuration(v, bounds);
    if ("problem" in read) ctx.addIssue({ code: "custom", message: read.problem });
    return "ms" in read ? read.ms : 0;
  });
}

/** The earliest time taken: the API keeps nothing older, and Postgres and JavaScript hold it alike. */
const EARLIEST = Date.UTC(2000, 0, 1);
/** How far ahead a time may be: a day (a zone written wrong, a server clock ahead of ours). */
const AHEAD = DAY;

/** The forms a time takes everywhere (APM_START, the file's `start`, --from/--to). */
const TIME_FORMS = "an ISO date or date-time (UTC unless a zone is given), a duration ago like 7d or 90m, or now";

const shownTime = (ms: number) => (Number.isFinite(new Date(ms).getTime()) ? new Date(ms).toISOString() : "beyond any calendar");

/** `2026-01-01`, `2026-01-01T10:00+09:00`, `7d` (that long before `now`), `now`; from 2000-01-01 to a day after `now`. */
export function readTime(text: string, now: number): Read {
  const t = text.trim();
  const ago = DURATION.test(t) ? readDuration(t, { min: 0, max: Number.POSITIVE_INFINITY }) : null;
  const ms = t === "now" ? now : ago && "ms" in ago ? now - ago.ms : parseUtcTime(t);
  if (ms === null) return { problem: `expected ${TIME_FORMS}, got ${show(text)}` };
  if (ms < EARLIEST || ms > now + AHEAD)
    return { problem: `must be from 2000-01-01 to a day from now, got ${show(text)} (${shownTime(ms)})` };
  return { ms };
}

/** APM_START and the file's `start`. */
export function startTime(now: number) {
  return z.string().transform((v, ctx) => {
    const read = readTime(v, now);
    if ("problem" in read) ctx.addIssue({ code: "custom", message: read.problem });
    return "ms" in read ? read.ms : 0;
  });
}
