// Measures shared by the per-type cube generators.
import { intIn, type Rng } from "../rng.ts";

/** Key fields and measures of one cube (or of a merge of cubes), all numbers. */
export type Fact = Record<string, number>;

/** Response-time measures of `count` calls around `base` ms (sum of squares kept for the stdev). */
export function timing(rng: Rng, count: number, base: number): Fact {
  const avg = base * (0.6 + 0.8 * rng());
  const timeSum = Math.round(avg * count);
  if (count === 1) return { timeSum, timeMin: timeSum, timeMax: timeSum, timeSq: timeSum * timeSum };
  const sd = avg * (0.1 + 0.4 * rng());
  return {
    timeSum,
    timeMin: Math.round(avg * (0.05 + 0.5 * rng())),
    timeMax: Math.round(avg * (1.2 + 2.5 * rng())),
    timeSq: Math.round(count * (avg * avg + sd * sd)),
  };
}

/** Call count of a key in a cube: busy keys in busy cubes get more. */
export function callCount(rng: Rng, pop: number, act: number, scale: number): number {
  return 1 + Math.floor(rng() * rng() * scale * pop * act);
}

export function errorsOf(rng: Rng, count: number, rate: number): number {
  return rng() < rate ? intIn(rng, 0, Math.ceil(count * 0.3)) : 0;
}
