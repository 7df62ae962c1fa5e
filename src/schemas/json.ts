import { isInteger, parse } from "lossless-json";

// Integers long enough to lose precision as a JS number parse to a double of 2^53 or more: then
// the text is parsed again, losslessly. Checking the parsed value costs a quarter of what a regular
// expression over the text did, and long digit runs inside strings ("errorSnapId":"58158979...",
// on every error statistic) no longer send a body through the slow lossless parser.
const LIMIT = 2 ** 53;

const big = (n: number) => n >= LIMIT || n <= -LIMIT;

/** Whether a parsed JSON value holds a number whose text may have been rounded. */
function mayBeRounded(value: unknown): boolean {
  if (typeof value === "number") return big(value);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === "object" ? mayBeRounded(item) : typeof item === "number" && big(item)) return true;
    return false;
  }
  const o = value as Record<string, unknown>;
  for (const key in o) {
    const item = o[key];
    if (typeof item === "object" ? mayBeRounded(item) : typeof item === "number" && big(item)) return true;
  }
  return false;
}

/**
 * JSON.parse that never rounds: integers beyond 2^53 (snapSeq, totalSpace, 64-bit ids) become
 * bigint, other numbers stay numbers. Bodies without such numbers take the fast native path only.
 */
export function parseJson(text: string): unknown {
  const fast: unknown = JSON.parse(text);
  if (!mayBeRounded(fast)) return fast;
  return parse(text, null, (value: string) => {
    if (isInteger(value)) {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : BigInt(value);
    }
    // Decimals beyond double precision (e.g. 9.223372E+18) are floats on the server too.
    return Number(value);
  });
}
