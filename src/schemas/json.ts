import { isInteger, parse } from "lossless-json";

// Integers long enough to lose precision as a JS number (2^53 has 16 digits). Not the long
// fractions of ordinary doubles (0.12345678901234567): they are floats on the server too, and
// sending every statistics page through the slow lossless parser cost a second per 100k rows.
// A JSON number starts a value, so it follows `:`, `,` or `[` (and blanks): long digit runs inside
// strings ("errorSnapId":"5815897978084376338", on every error statistic) are not numbers.
const LONG_NUMBER = /(?:^|[:,[])\s*-?\d{16,}(?![\d.eE])/;

/**
 * JSON.parse that never rounds: integers beyond 2^53 (snapSeq, totalSpace, 64-bit ids) become
 * bigint, other numbers stay numbers. Bodies without long digit runs take the fast native path.
 */
export function parseJson(text: string): unknown {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  return parse(text, null, (value: string) => {
    if (isInteger(value)) {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : BigInt(value);
    }
    // Decimals beyond double precision (e.g. 9.223372E+18) are floats on the server too.
    return Number(value);
  });
}
