// One zod type per kind of setting value, shared by every source (environment variables arrive as
// text, the file's values as JSON): durations, times, bounded numbers, names. Messages say what
// was expected and what came; the source and key are added where the issue is reported.
import { isIP } from "node:net";
import { z } from "zod";
import { DAY, HOUR, MINUTE } from "../catalogue/types.ts";
import { parseUtcTime } from "../util/time.ts";
import { didYouMean } from "./suggest.ts";

const DURATION = /^(\d+)\s*(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: MINUTE, h: HOUR, d: DAY };

/** Parses `90s`, `10m`, `1h`, `7d` or a bare number of ms. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const m = DURATION.exec(trimmed);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : null;
}

/** The forms a time takes everywhere (APM_START, the file's `start`, --from/--to). */
export const TIME_FORMS = "an ISO date or date-time (UTC unless a zone is given), a duration ago like 7d or 90m, or now";

/** `2026-01-01`, `2026-01-01T10:00+09:00`, `7d` (that long before `now`), `now`; null otherwise. */
export function parseTime(text: string, now: number): number | null {
  const t = text.trim();
  if (t === "now") return now;
  // A bare number is a duration in ms to parseDuration, but never a sensible time.
  const ago = /^\d+$/.test(t) ? null : parseDuration(t);
  return ago !== null ? now - ago : parseUtcTime(t);
}

const show = (v: unknown) => JSON.stringify(v);
const scalar = z.union([z.string(), z.number()]);

/** A duration in ms; with `grid`, a positive multiple of 5 minutes (window sizes). */
function durationOf(grid: boolean) {
  return scalar.transform((v, ctx) => {
    const ms = parseDuration(v);
    if (ms === null) ctx.addIssue({ code: "custom", message: `expected a duration like 500ms, 30s, 10m, 1h or 7d, got ${show(v)}` });
    else if (grid && (ms <= 0 || ms % (5 * MINUTE) !== 0))
      ctx.addIssue({ code: "custom", message: `must be a positive multiple of 5 minutes (5m, 30m, 1h, 1d), got ${show(v)}` });
    return ms ?? 0;
  });
}

export const duration = durationOf(false);
/** Window sizes: whole 5-minute steps of the API's grid. */
export const grain = durationOf(true);

/** A number from `min` to `max` (whole when `int`), as a number or as text. */
export function numberIn(min: number, max: number, int = true) {
  const what = int ? `a whole number from ${min} to ${max}` : `a number from ${min} to ${max}`;
  return scalar.transform((v, ctx) => {
    const n = typeof v === "number" ? v : v.trim() === "" ? Number.NaN : Number(v);
    if (!Number.isFinite(n) || n < min || n > max || (int && !Number.isInteger(n)))
      ctx.addIssue({ code: "custom", message: `expected ${what}, got ${show(v)}` });
    return n;
  });
}

export function startTime(now: number) {
  return z.string().transform((v, ctx) => {
    const ms = parseTime(v, now);
    if (ms === null) ctx.addIssue({ code: "custom", message: `expected ${TIME_FORMS}, got ${show(v)}` });
    return ms ?? 0;
  });
}

/** One of `choices`, with the closest one suggested. */
export function oneOf<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.string().transform((v, ctx) => {
    if (!choices.includes(v))
      ctx.addIssue({ code: "custom", message: `one of ${choices.join(", ")}; got ${show(v)}${didYouMean(v, choices)}` });
    return v as T[number];
  });
}

export const httpUrl = z
  .string()
  .refine((v) => /^https?:\/\/[^/]+/.test(v), { error: (iss) => `not an http(s) URL: ${show(iss.input)}` })
  .transform((v) => v.replace(/\/+$/, ""));

// Never echo it: the URL may hold a password.
export const postgresUrl = z.string().refine((v) => /^postgres(ql)?:\/\//.test(v), "must start with postgres:// or postgresql://");

export const sqlIdentifier = z
  .string()
  .refine((v) => /^[a-z_][a-z0-9_]{0,62}$/.test(v), { error: (iss) => `must be a lower-case SQL identifier, got ${show(iss.input)}` });

// node:http and undici compare header names lower-cased.
export const headerName = z
  .string()
  .refine((v) => /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(v), { error: (iss) => `not an HTTP header name: ${show(iss.input)}` })
  .transform((v) => v.toLowerCase());

/**
 * An address to listen on: an IP address (`127.0.0.1`, `0.0.0.0`, `::`) or a host name. Never
 * echoed back with anything else: it names an interface, nothing secret.
 */
export const listenAddress = z
  .string()
  .transform((v) => v.trim())
  .refine((v) => isIP(v) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(v), {
    error: (iss) => `expected an IP address to listen on (127.0.0.1, 0.0.0.0, ::) or a host name, got ${show(iss.input)}`,
  });

export const nonEmpty = z.string().refine((v) => v.trim() !== "", "must not be empty");

/** Five cron fields (minute hour day-of-month month day-of-week), as graphile-worker reads them. */
export const cron = z
  .string()
  .transform((v) => v.trim())
  .refine(
    (v) => {
      const field = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;
      const fields = v.split(/\s+/);
      return fields.length === 5 && fields.every((f) => field.test(f));
    },
    { error: (iss) => `expected a cron expression of five fields, e.g. "*/10 * * * *", got ${show(iss.input)}` },
  );

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const LOG_FORMATS = ["pretty", "json", "plain"] as const;
