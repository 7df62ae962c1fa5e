// The 5-minute cube grid the server aggregates on, and the date texts the API prints.
import { DAY, MINUTE } from "../catalogue/types.ts";

export const CUBE_MS = 5 * MINUTE;

export function floorTo(ms: number, step: number): number {
  return Math.floor(ms / step) * step;
}

/**
 * Cube starts the server holds for a request: start in [stime, etime) and the cube complete at
 * `now` (a cube still filling is never served; spec statistics rule 2 clamps etime to the clock).
 */
export function cubesIn(stime: number, etime: number, now = Number.POSITIVE_INFINITY): number[] {
  const out: number[] = [];
  const first = Math.ceil(stime / CUBE_MS) * CUBE_MS;
  for (let c = first; c < etime && c + CUBE_MS <= now; c += CUBE_MS) out.push(c);
  return out;
}

export function dayStart(ms: number): number {
  return floorTo(ms, DAY);
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/** Java `Date.toString()` in GMT: "Tue Sep 18 08:34:27 GMT 2018" (project detail, visitor_m). */
export function javaDate(ms: number): string {
  const d = new Date(ms);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return `${WEEKDAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${time} GMT ${d.getUTCFullYear()}`;
}

/** ISO date-time without zone: "2018-10-19T07:17:03.774" (project list createTime). */
export function isoNoZone(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "");
}

/** Start of the UTC month containing `ms`, and the next one. */
export function monthStart(ms: number, add = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1);
}

/**
 * Time parameter: epoch ms, or the agent-list text forms yyyyMMddHHmmss, yyyyMMddHHmm, MMddHHmmss,
 * MMddHHmm (zone undocumented: read as UTC; the month-day forms take the year of `now`).
 */
export function parseTime(value: unknown, now: number, textForms: boolean): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : null;
  if (typeof value !== "string" || !/^\d+$/.test(value)) return null;
  const text = value;
  if (!textForms || text.length === 13) return Number.isSafeInteger(Number(text)) ? Number(text) : null;
  const year = new Date(now).getUTCFullYear();
  const at = (y: number, s: string) =>
    Date.UTC(
      y,
      Number(s.slice(0, 2)) - 1,
      Number(s.slice(2, 4)),
      Number(s.slice(4, 6)),
      Number(s.slice(6, 8)),
      Number(s.slice(8, 10) || 0),
    );
  if (text.length === 14 || text.length === 12) return at(Number(text.slice(0, 4)), text.slice(4));
  if (text.length === 10 || text.length === 8) return at(year, text);
  return null;
}
