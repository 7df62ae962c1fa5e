// `retention` (file) and APM_RETENTION: how long the partitioned tables keep their rows, per
// stream id, prefix, kind or rollup (`stat=400d,range=90d,points=30d,rollup.daily=5y`). Unset:
// everything is kept. The keys' names are src/config/retention-keys.ts.
import { z } from "zod";
import { DAY } from "../catalogue/types.ts";
import { retentionKeyProblem } from "./retention-keys.ts";

const FORM = /^(\d+)\s*(d|w|y)$/;
const UNIT_MS: Readonly<Record<string, number>> = { d: DAY, w: 7 * DAY, y: 365 * DAY };

// The longest retention: its start (now minus it) must be a time JavaScript and Postgres both
// hold (Postgres's timestamps start in 4713 BC); a thousand years keeps everything in practice.
const MAX_MS = 1000 * UNIT_MS.y!;

/** `400d`, `12w`, `5y` (a year is 365 days) in ms; null for anything else, less than a day or more than 1000y. */
export function parseRetention(text: string): number | null {
  const m = FORM.exec(text.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : 0;
  return ms >= DAY && ms <= MAX_MS ? ms : null;
}

const show = (v: unknown) => JSON.stringify(v);

/** Entries of the comma form; an entry without `=` keeps an empty duration (reported below). */
function entriesOf(text: string): [string, string][] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf("=");
      return eq < 0 ? [entry, ""] : [entry.slice(0, eq).trim(), entry.slice(eq + 1).trim()];
    });
}

/** The comma form (APM_RETENTION, or the file's string) or the file's object form, to key -> ms. */
export const retention = z.union([z.string(), z.record(z.string(), z.string())]).transform((v, ctx) => {
  const entries = typeof v === "string" ? entriesOf(v) : Object.entries(v);
  const out: Record<string, number> = {};
  for (const [key, text] of entries) {
    const problem = retentionKeyProblem(key);
    const ms = parseRetention(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
    else if (key in out) ctx.addIssue({ code: "custom", message: `${key} is given twice` });
    else if (ms === null)
      ctx.addIssue({
        code: "custom",
        message: `${key}: expected a retention like 400d, 12w or 5y (days, weeks, years of 365 days; at least 1d, at most 1000y; unset keeps everything), got ${show(text)}`,
      });
    else out[key] = ms;
  }
  return out;
});
