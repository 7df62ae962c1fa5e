// Visitors (users with a transaction in the last 5 minutes) per 5 minutes, hour, day and month.
import { DAY, HOUR } from "../../catalogue/types.ts";
import { CUBE_MS, monthStart } from "../grid.ts";
import { mix } from "../rng.ts";
import { activity, type ProjectWorld } from "../world.ts";

export function visitorsAt(w: ProjectWorld, cube: number): number {
  return Math.round(activity(w, cube) * 400 * (0.9 + (mix(w.seed, w.pcode, cube, "visitors") % 200) / 1000));
}

/** Hourly value: the busiest 5 minutes of the hour. */
export function visitorsHour(w: ProjectWorld, hour: number): number {
  let max = 0;
  for (let c = hour; c < hour + HOUR; c += CUBE_MS) max = Math.max(max, visitorsAt(w, c));
  return max;
}

/** Daily value: distinct users of the day, estimated from the hourly peaks. */
export function visitorsDay(w: ProjectWorld, day: number): number {
  let sum = 0;
  for (let h = day; h < day + DAY; h += HOUR) sum += visitorsHour(w, h);
  return Math.round(sum * 0.8);
}

export function monthlyActiveUsers(w: ProjectWorld, month: number): number {
  return 20_000 + (mix(w.seed, w.pcode, month, "mau") % 15_000);
}

/** Bucket starts (hour, day or month) with start in [stime, etime). */
export function bucketsIn(stime: number, etime: number, unit: "h" | "d" | "m"): number[] {
  const out: number[] = [];
  if (unit === "m") {
    for (let m = monthStart(stime); m < etime; m = monthStart(m, 1)) if (m >= stime) out.push(m);
    return out;
  }
  const step = unit === "h" ? HOUR : DAY;
  for (let b = Math.ceil(stime / step) * step; b < etime; b += step) out.push(b);
  return out;
}
