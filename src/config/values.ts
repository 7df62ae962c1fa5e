// One zod type per kind of setting value, shared by every source (environment variables arrive as
// text, the file's values as JSON): bounded numbers, URLs, names (durations and times are in
// time-values.ts, cron in cron.ts). Messages say what was expected and what came; the source and
// key are added where the issue is reported.
import { isIP } from "node:net";
import { z } from "zod";
import { didYouMean } from "./suggest.ts";

const show = (v: unknown) => JSON.stringify(v);
const scalar = z.union([z.string(), z.number()]);

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

/** One of `choices`, with the closest one suggested. */
export function oneOf<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.string().transform((v, ctx) => {
    if (!choices.includes(v))
      ctx.addIssue({ code: "custom", message: `one of ${choices.join(", ")}; got ${show(v)}${didYouMean(v, choices)}` });
    return v as T[number];
  });
}

/**
 * What is wrong with `text` as a URL of one of `protocols` (`http:`), as the WHATWG parser the
 * drivers use reads it (user and password decoded, as they are sent), or null. Never echoes it:
 * a URL may hold a password.
 */
export function urlProblem(text: string, protocols: readonly string[], needsHost = true): string | null {
  const space = text.search(/\s/);
  if (space >= 0) return `holds a space or line break at character ${space + 1}; a URL cannot (percent-encode it: %20)`;
  let url: URL;
  try {
    url = new URL(text);
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    return "is not a URL (a character that must be percent-encoded, like % or @ in a password?)";
  }
  if (!protocols.includes(url.protocol)) return `must start with ${protocols.map((p) => `${p}//`).join(" or ")}`;
  return url.hostname || !needsHost ? null : "names no host";
}

/** A URL setting, trimmed, refused with what `problemOf` says of it. */
function urlSetting(problemOf: (text: string) => string | null) {
  return z
    .string()
    .transform((v) => v.trim())
    .superRefine((v, ctx) => {
      const problem = problemOf(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    });
}

export const httpUrl = urlSetting((v) => urlProblem(v, ["http:", "https:"])).transform((v) => v.replace(/\/+$/, ""));

/**
 * What is wrong with `text` as a Postgres URL, as postgres.js reads it (a comma list of hosts is
 * read by its first one), or null.
 */
export function postgresUrlProblem(text: string): string | null {
  if (!/^postgres(ql)?:\/\//.test(text)) return "must start with postgres:// or postgresql://";
  const authority = text.slice(text.indexOf("://") + 3).split(/[?/]/)[0]!;
  let host: string;
  try {
    host = decodeURIComponent(authority.slice(authority.indexOf("@") + 1));
  } catch {
    return "is not a URL (a malformed %-escape in the host)";
  }
  // No host: postgres.js's default (PGHOST, or localhost).
  return urlProblem(text.replace(host, host.split(",")[0]!), ["postgres:", "postgresql:"], false);
}

export const postgresUrl = urlSetting(postgresUrlProblem);

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

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const LOG_FORMATS = ["pretty", "json", "plain"] as const;
