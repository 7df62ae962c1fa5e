// A small YAML emitter for generated files (`schema --dbt`): block mappings and sequences, every
// string a JSON-style double-quoted scalar. JSON's string syntax is YAML's double-quoted style, so
// no value can be read as another type ("on", "1e3", "null", "2026-01-01") and no text needs
// YAML's own escaping rules; the few characters YAML refuses raw but JSON leaves (DEL, C1
// controls, byte-order marks, noncharacters) are escaped as \uXXXX.
import { terminalSafeJson } from "./terminal-text.ts";

/** What the emitter writes: nested plain objects and arrays of strings, numbers, booleans and null. */
export type YamlValue = Scalar | readonly YamlValue[] | { readonly [key: string]: YamlValue | undefined };
type Scalar = string | number | boolean | null;

// Outside YAML's printable set (YAML 1.2, 5.1) and left raw by terminalSafeJson, which escapes DEL
// and C1 (and the bidi controls). JSON.stringify escapes lone surrogates itself.
const NOT_PRINTABLE = /[\ufeff\ufffe\uffff]/g;

/** A double-quoted YAML scalar: JSON's string syntax, with what YAML may not hold raw escaped. */
function yamlString(text: string): string {
  return terminalSafeJson(JSON.stringify(text)).replace(NOT_PRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

// Keys that YAML 1.1 readers (PyYAML, which dbt uses) would take for booleans or null when plain.
const RESERVED = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);

/** A key as written: plain when it is a lower-case word no reader can mistake, else quoted. */
function yamlKey(key: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(key) && !RESERVED.has(key) ? key : yamlString(key);
}

function scalar(value: Scalar): string {
  if (typeof value === "string") return yamlString(value);
  if (typeof value === "number" && !Number.isFinite(value)) throw new RangeError(`not a YAML number: ${value}`);
  return String(value);
}

const isScalar = (v: YamlValue): v is Scalar => v === null || typeof v !== "object";
const isEmpty = (v: YamlValue) => !isScalar(v) && Object.keys(v).length === 0;
const empty = (v: YamlValue) => (Array.isArray(v) ? "[]" : "{}");

/** Lines of `value` at `indent` spaces; a collection's entries each start a line. */
function lines(value: YamlValue, indent: number): string[] {
  const pad = " ".repeat(indent);
  if (isScalar(value)) return [`${pad}${scalar(value)}`];
  if (Array.isArray(value)) {
    return (value as readonly YamlValue[]).flatMap((item) => {
      if (isScalar(item)) return [`${pad}- ${scalar(item)}`];
      if (isEmpty(item)) return [`${pad}- ${empty(item)}`];
      // The first line of a nested block goes after the dash, the rest stays aligned with it.
      const [first, ...rest] = lines(item, indent + 2);
      return [`${pad}- ${first!.trimStart()}`, ...rest];
    });
  }
  // An absent (undefined) entry is left out, as JSON.stringify leaves it out.
  return Object.entries(value).flatMap(([key, v]) => {
    if (v === undefined) return [];
    if (isScalar(v)) return [`${pad}${yamlKey(key)}: ${scalar(v)}`];
    if (isEmpty(v)) return [`${pad}${yamlKey(key)}: ${empty(v)}`];
    return [`${pad}${yamlKey(key)}:`, ...lines(v, indent + 2)];
  });
}

/** `value` as a YAML document, optionally after `#` comment lines. */
export function yamlDocument(value: YamlValue, comments: readonly string[] = []): string {
  return `${[...comments.map((c) => `# ${c}`.trimEnd()), ...lines(value, 0)].join("\n")}\n`;
}
