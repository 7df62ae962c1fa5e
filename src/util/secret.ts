import { inspect } from "node:util";

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

/** Replace every occurrence of the given secrets in a text (last line of defence for error texts). */
export function redact(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const secret of secrets) {
    const v = secret.reveal();
    if (v.length > 0) out = out.split(v).join(MASK);
  }
  return out;
}
