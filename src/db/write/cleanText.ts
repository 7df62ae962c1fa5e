// Text the database cannot hold: NUL (U+0000), which Postgres refuses in text and in jsonb
// ("invalid byte sequence for encoding UTF8: 0x00", "unsupported Unicode escape sequence"), and
// unpaired UTF-16 surrogates (Java strings carry both; jsonb refuses their escapes, and as text
// they would turn into U+FFFD on the wire without a word). Such a value is written with U+FFFD in
// their place and counted; the original stays readable in the row's `extra` under `_original`
// (docs/design.md "Text the database cannot hold").
declare global {
  // ES2024 (Node 20 has both); the project's lib is ES2023.
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** The key of `extra` that keeps the originals of a row's replaced values. */
export const ORIGINAL_KEY = "_original";

/** Thrown by a COPY encoder for a value that is not clean; the row is then cleaned and encoded again. */
export const DIRTY: unique symbol = Symbol("dirty text");

/** Whether the database can hold `s` as it is (the common case: two native scans). */
export function isClean(s: string): boolean {
  return s.isWellFormed() && !s.includes("\0");
}

/** `s` with U+FFFD for each NUL and unpaired surrogate. */
export function cleanString(s: string): string {
  return s.toWellFormed().replaceAll("\0", "\uFFFD");
}

// JSON.stringify writes a NUL as \u0000 and an unpaired surrogate as \udXXX, and a paired one as
// itself: so these escapes in its output are exactly the values to replace. An escaped backslash
// is matched first, so that the text `\u0000` (backslash, u, 0...) is not taken for one.
const ESCAPES = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/** Whether JSON text written by JSON.stringify holds a value the database cannot hold. */
export function isCleanJson(text: string): boolean {
  if (!text.includes("\\u")) return true;
  for (const [match] of text.matchAll(ESCAPES)) if (match !== "\\\\") return false;
  return true;
}

/** `value` with every string (and object key) cleaned; the same reference when nothing changed. */
export function cleanValue(value: unknown): unknown {
  if (typeof value === "string") return isClean(value) ? value : cleanString(value);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  if (Array.isArray(value)) {
    const items = value.map(cleanValue);
    return items.some((v, i) => v !== value[i]) ? items : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const k = isClean(key) ? key : cleanString(key);
    setOwn(out, k, cleanValue(v));
    changed ||= k !== key || out[k] !== v;
  }
  return changed ? out : value;
}

/** `o[key] = value` as an own property: a `__proto__` key the server sent is data, not the prototype. */
function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** The original of a replaced value, as escaped text the database holds (JSON's escapes; a string without quotes). */
export function escapedOriginal(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value).slice(1, -1) : jsonText(value);
}

/**
 * Cleans one row's `values` (of `columns`) in place; returns how many values changed. Each
 * changed column, and each changed top-level field of `extra`, keeps its original, escaped, in
 * `extra._original` (when the row has an `extra` column).
 */
export function cleanRow(columns: readonly string[], values: unknown[]): number {
  const originals: Record<string, string> = {};
  let replaced = 0;
  const extraAt = columns.indexOf("extra");
  for (let i = 0; i < columns.length; i++) {
    const value = values[i];
    if (i === extraAt && isPlainObject(value)) {
      const extra: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) {
        const k = isClean(key) ? key : cleanString(key);
        setOwn(extra, k, cleanValue(v));
        if (k !== key || extra[k] !== v) {
          setOwn(originals, k, escapedOriginal(v));
          replaced++;
        }
      }
      values[i] = extra;
    } else {
      const clean = cleanValue(value);
      if (clean !== value) {
        originals[columns[i]!] = escapedOriginal(value);
        values[i] = clean;
        replaced++;
      }
    }
  }
  if (replaced > 0 && extraAt >= 0) {
    const extra = values[extraAt];
    values[extraAt] = { ...(isPlainObject(extra) ? extra : {}), [ORIGINAL_KEY]: originals };
  }
  return replaced;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Free text for a text column (the ledger's error): NUL, unpaired surrogates and other control
 * characters but tab and newline become JSON-style escapes, so nothing is lost and nothing raw
 * (a compressed bomb's bytes) reaches the database or a terminal reading it.
 */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for
const UNSAFE = /[\0-\x08\x0b-\x1f\x7f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** An object with no own keys (the `extra` of nearly every record): no JSON.stringify for it. */
function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype)
    return false;
  for (const _ in value) return false;
  return true;
}

export function jsonText(value: unknown): string {
  if (isEmptyObject(value)) return "{}";
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    // A nested bigint (values beyond 2^53 kept exact): printed as its digits, a JSON number.
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `\u0001${v}\u0001` : v)).replace(
      /"\\u0001(-?\d+)\\u0001"/g,
      "$1",
    );
  }
}
