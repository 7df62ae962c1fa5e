import { inspect } from "node:util";
import { type SecretMatcher, secretMatcher } from "./secret-spellings.ts";

const MASK = "***";

/**
 * A credential that cannot leak by accident: printing, logging, JSON-serialising or string
 * interpolation all show `***`. Only `reveal()` (used by the HTTP layer to set a header) gives
 * the value.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return MASK;
  }

  toJSON(): string {
    return MASK;
  }

  [inspect.custom](): string {
    return `Secret(${MASK})`;
  }
}

/**
 * Masks every spelling of the given secrets in a text: as it is, in another case, URL-, JSON-,
 * HTML-escaped, base64 or hex, and cut short anywhere: a run of its first or last characters
 * long enough to matter (secret-spellings.ts). The last line of defence for texts a server sent back: error bodies,
 * error messages, the report.
 */
export function redact(text: string, secrets: readonly Secret[]): string {
  const matcher = matcherOf(secrets);
  if (!matcher) return text;
  const found = matcher.find(text);
  if (found.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of found) {
    parts.push(text.slice(from, start), MASK);
    from = end;
  }
  parts.push(text.slice(from));
  return parts.join("");
}

// The matchers of the last few sets of secrets (a process has one or two: the configured tokens).
const matchers = new Map<string, SecretMatcher | null>();

function matcherOf(secrets: readonly Secret[]): SecretMatcher | null {
  const tokens = secrets.map((s) => s.reveal());
  const key = tokens.join("\u0000");
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    matcher = secretMatcher(tokens);
    if (matchers.size >= 8) matchers.delete(matchers.keys().next().value!);
    matchers.set(key, matcher);
  }
  return matcher;
}
