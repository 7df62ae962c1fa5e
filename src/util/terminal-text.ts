// Text from a server (record keys, values quoted in a reason, error messages) is printed and
// logged, and a terminal acts on control characters: ESC and CSI (0x9B) start sequences that set
// the window title, move the cursor, clear the screen or rewrite what was printed; CR and BEL do
// their part; bidi controls reorder what is shown. Every line we print or log shows them as
// escapes instead; the data itself is stored as sent.

// C0 but tab and newline, DEL, C1, and the bidi embedding, override and isolate controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// The same and newline: in a value of one line, a newline would forge the next line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves raw (it escapes C0 itself): DEL, C1, bidi controls.
const RAW_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escapeOf = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** One line of text for a terminal: every control character (newline too) written as `\u001b`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL_OR_NEWLINE, escapeOf);
}

/** Lines we laid out (a table, a summary): newlines and tabs kept, every other control escaped. */
export function terminalSafeLines(text: string): string {
  return text.replace(CONTROL, escapeOf);
}

/**
 * JSON text (JSON.stringify's or pino's) with the control characters JSON leaves raw escaped as
 * well: the same JSON value, safe on a terminal.
 */
export function terminalSafeJson(json: string): string {
  return json.replace(RAW_IN_JSON, escapeOf);
}

/** A value with every string in it (and every key) made one-line safe, for a printer that shows them raw. */
export function terminalSafeValue(value: unknown): unknown {
  if (typeof value === "string") return terminalSafe(value);
  if (Array.isArray(value)) return value.map(terminalSafeValue);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    Object.defineProperty(out, terminalSafe(k), { value: terminalSafeValue(v), enumerable: true, writable: true, configurable: true });
  return out;
}
