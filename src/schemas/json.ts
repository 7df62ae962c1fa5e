import { isInteger, LosslessNumber, parse, stringify } from "lossless-json";

// Integers long enough to lose precision as a JS number parse to a double of 2^53 or more: then
// the text is parsed again, losslessly. Checking the parsed value costs a quarter of what a regular
// expression over the text did, and long digit runs inside strings ("errorSnapId":"58158979...",
// on every error statistic) no longer send a body through the slow lossless parser. A number
// beyond a double (1e400) parses to Infinity, which is caught by the same test.
const LIMIT = 2 ** 53;

/**
 * Deepest nesting kept. No API record nests more than a few levels; a deeper value is cut here,
 * so that no recursive walk after the parser (ours, zod's, JSON.stringify, the database's jsonb
 * input) overflows its stack on it, and the record holding it is quarantined (parse-response.ts).
 */
export const MAX_JSON_DEPTH = 64;

/** Where a value nested deeper than MAX_JSON_DEPTH was cut; written as a note. */
export const TOO_DEEP: { toJSON(): string } = Object.freeze({
  toJSON: () => `(nested deeper than ${MAX_JSON_DEPTH} levels; cut)`,
});

/** A number a double cannot hold (1e400): kept as its text, a LosslessNumber (written unquoted by lossless-json's stringify). */
export { LosslessNumber as OverflowNumber };

// Parsed bodies holding a cut or an overflow: parseResponse looks for them only there.
const marked = new WeakSet<object>();

/** Whether a value returned by parseJson holds a TOO_DEEP cut or an OverflowNumber somewhere. */
export function holdsMarks(value: unknown): boolean {
  return typeof value === "object" && value !== null && marked.has(value);
}

interface Scan {
  rounded: boolean;
  cut: boolean;
  overflow: boolean;
}

const big = (n: number) => n >= LIMIT || n <= -LIMIT;

// What cutDeep leaves in the text where it cut (a NUL-framed string no API sends); scan turns it into TOO_DEEP.
const CUT_SENTINEL = "\u0000apm-sync-cut\u0000";

/**
 * Notes numbers that may have been rounded; cuts containers nested deeper than MAX_JSON_DEPTH
 * (and, with `sentinels`, the places cutDeep already cut in the text).
 */
function scan(container: unknown, depth: number, s: Scan, sentinels = false): void {
  if (Array.isArray(container)) {
    for (let i = 0; i < container.length; i++) {
      const item: unknown = container[i];
      const kept = visit(item, depth, s, sentinels);
      if (kept !== item) container[i] = kept;
    }
    return;
  }
  const o = container as Record<string, unknown>;
  for (const key in o) {
    const item = o[key];
    const kept = visit(item, depth, s, sentinels);
    if (kept !== item) o[key] = kept;
  }
}

/** One child of a container at `depth`: itself, or TOO_DEEP where it is cut. */
function visit(item: unknown, depth: number, s: Scan, sentinels: boolean): unknown {
  if (typeof item === "number") {
    if (big(item)) s.rounded = true;
    return item;
  }
  if (typeof item !== "object" || item === null || item === TOO_DEEP) {
    if (!sentinels || item !== CUT_SENTINEL) return item;
  } else if (item instanceof LosslessNumber) {
    s.overflow = true;
    return item;
  } else if (depth < MAX_JSON_DEPTH) {
    scan(item, depth + 1, s, sentinels);
    return item;
  }
  s.cut = true;
  return TOO_DEEP;
}

/**
 * JSON.parse that never rounds: integers beyond 2^53 (snapSeq, totalSpace, 64-bit ids) become
 * bigint, numbers beyond a double (1e400) an OverflowNumber holding their text, other numbers
 * stay numbers. Values nested deeper than MAX_JSON_DEPTH are cut (TOO_DEEP). Bodies without any
 * of these take the fast native path only.
 */
export function parseJson(text: string): unknown {
  return settled(JSON.parse(text), () => text);
}

/**
 * The elements of a JSON array's text, each as parseJson reads it alone: one native parse for
 * them all, and an element holding a number beyond 2^53 read again exactly from its own text
 * (`text(k)`). null when the text is not one valid array of `count` elements: then each element
 * is to be read alone, so that a bad one is refused by itself.
 */
export function parseJsonElements(array: string, count: number, text: (k: number) => string): unknown[] | null {
  let list: unknown;
  try {
    list = JSON.parse(array);
  } catch {
    return null;
  }
  if (!Array.isArray(list) || list.length !== count) return null;
  return list.map((value: unknown, k) => settled(value, () => text(k)));
}

// Thrown by settledWithin's text(), which has no text to give.
const NO_TEXT = Symbol("no text");

/**
 * A value JSON.parse read as part of a larger text, as parseJson would read it from its own text:
 * itself, its cuts marked; undefined where it rounded a number (only its own text reads it exactly).
 */
export function settledWithin(value: unknown): unknown {
  try {
    return settled(value, () => {
      throw NO_TEXT;
    });
  } catch (e) {
    if (e === NO_TEXT) return undefined;
    throw e;
  }
}

/** A value JSON.parse read from `text()`: itself, its cuts marked, or read again exactly where it rounded a number. */
function settled(fast: unknown, text: () => string): unknown {
  if (typeof fast !== "object" || fast === null) return typeof fast === "number" && big(fast) ? exact(text()) : fast;
  const s: Scan = { rounded: false, cut: false, overflow: false };
  scan(fast, 1, s);
  if (!s.rounded) {
    if (s.cut) marked.add(fast);
    return fast;
  }
  // The lossless parser recurses: what is too deep is cut from the text before it reads it.
  const value = exact(s.cut ? cutDeep(text()) : text());
  if (typeof value === "object" && value !== null) {
    // Rounded numbers are bigints now; what is left to mark is an overflow or a cut.
    const again: Scan = { rounded: false, cut: false, overflow: false };
    scan(value, 1, again, s.cut);
    if (again.cut || again.overflow) marked.add(value);
  }
  return value;
}

function exact(text: string): unknown {
  try {
    return parse(text, null, (value: string) => {
      if (isInteger(value)) {
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : BigInt(value);
      }
      // Decimals beyond double precision (e.g. 9.223372E+18) are floats on the server too; a
      // decimal beyond a double's range has no float: its text is kept.
      const n = Number(value);
      return Number.isFinite(n) ? n : new LosslessNumber(value);
    });
  } catch (e) {
    if (e instanceof RangeError) throw new SyntaxError(`JSON too deeply nested to read exactly (${e.message})`);
    throw e;
  }
}

/**
 * The text with every container opened deeper than MAX_JSON_DEPTH replaced by the string
 * CUT_SENTINEL; one pass, no recursion. Only called for text JSON.parse accepted.
 */
function cutDeep(text: string): string {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) i = stringEnd(text, i);
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth <= MAX_JSON_DEPTH) continue;
      out.push(text.slice(from, i), JSON.stringify(CUT_SENTINEL));
      i = containerEnd(text, i);
      from = i + 1;
      depth--;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  out.push(text.slice(from));
  return out.join("");
}

/** Index of the quote closing the string that opens at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c /* backslash */) j++;
    else if (c === 0x22) return j;
  }
  return text.length;
}

/** Index of the bracket closing the container that opens at `i`. */
function containerEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) j = stringEnd(text, j);
    else if (c === 0x5b || c === 0x7b) depth++;
    else if ((c === 0x5d || c === 0x7d) && --depth === 0) return j;
  }
  return text.length;
}

/**
 * Why a parsed record cannot be stored as it came (a cut or an overflow inside it), naming the
 * top-level field; null when it holds neither.
 */
export function markedReason(record: unknown): string | null {
  if (typeof record !== "object" || record === null) return null;
  for (const [key, value] of Object.entries(record)) {
    const found = findMark(value);
    if (found === TOO_DEEP) return `${key}: nested deeper than ${MAX_JSON_DEPTH} levels (cut; the record is kept as text)`;
    if (found instanceof LosslessNumber) return `${key}: ${found.value} is beyond the range of a double (overflow; its text is kept)`;
  }
  return null;
}

// Cut containers end every walk at MAX_JSON_DEPTH, so this recursion is bounded.
function findMark(value: unknown): unknown {
  if (value === TOO_DEEP || value instanceof LosslessNumber) return value;
  if (typeof value !== "object" || value === null) return null;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    const found = findMark(item);
    if (found !== null) return found;
  }
  return null;
}

/** A record as JSON text with its long numbers and overflows written exactly (quarantine's raw text). */
export function exactText(value: unknown): string {
  return stringify(value) ?? "null";
}
