// The one rule that turns an API record into a warehouse row (docs/design.md "Warehouse contract"): output keys are
// the snake_case of the API field name, unknown fields are kept under their original key in
// `extra` (exactly: `__proto__` and `constructor` too), fields the shape marks optional become null
// when absent. The warehouse derives its column names from the same `snakeCase`, so both sides
// must use this file. `extra` also holds two keys of our own (RESERVED_EXTRA_KEYS): a server's key
// of that form gets one more leading `_`, so that ours and the server's never meet.
import { z } from "zod";
import { fastField, INVALID } from "./fast.ts";

type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
type IsUpper<C extends string> = C extends Lowercase<C> ? false : true;
type IsLowerOrDigit<C extends string> = C extends Digit ? true : C extends Uppercase<C> ? false : true;

/** Type-level twin of `snakeCase` (HostHash -> host_hash, agent.version -> agent_version). */
export type SnakeCase<S extends string, Prev extends string = ""> = S extends `${infer C}${infer Rest}`
  ? `${C extends "." ? "_" : IsUpper<C> extends true ? (IsLowerOrDigit<Prev> extends true ? `_${Lowercase<C>}` : Lowercase<C>) : C}${SnakeCase<Rest, C>}`
  : "";

/**
 * snake_case of an API field name: serviceHash -> service_hash, HostHash -> host_hash,
 * Service_hash -> service_hash, agent.version -> agent_version, time_max -> time_max.
 */
export function snakeCase(key: string): string {
  return key
    .replace(/\./g, "_")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase();
}

type Shape = Record<string, z.ZodType>;

/** Absent optional fields come out as null, never undefined (one column per field, always). */
type Present<T> = undefined extends T ? Exclude<T, undefined> | null : T;

/** Output of `recordSchema(shape)`: snake_case keys plus `extra`. */
export type RecordOutput<S extends Shape, Drop extends string = never> = {
  [K in Exclude<keyof S & string, Drop> as SnakeCase<K>]: Present<z.output<S[K]>>;
} & { extra: Record<string, unknown> };

export interface RecordOptions<Drop extends string> {
  /** Fields validated but never stored (masked credentials such as `apiToken`). */
  readonly drop?: readonly Drop[];
}

/**
 * Declares a record schema from API field names. The result validates the known fields, maps them
 * to snake_case, and keeps every other field in `extra` under its original key.
 */
export function recordSchema<S extends Shape, Drop extends keyof S & string = never>(shape: S, options: RecordOptions<Drop> = {}) {
  const keys = Object.keys(shape);
  const dropped = new Set<string>(options.drop ?? []);
  const names = new Map<string, string>();
  for (const key of keys) {
    const name = snakeCase(key);
    const clash = names.get(name);
    if (clash !== undefined || name === "extra") throw new Error(`record fields ${clash ?? ""} and ${key} both map to column ${name}`);
    names.set(name, key);
  }
  // Column names computed once per schema, not once per record (a hot path: 10,000-record pages).
  const columns = keys.filter((key) => !dropped.has(key)).map((key) => [key, snakeCase(key)] as const);
  const known = z.looseObject(shape);
  // The unknown fields are read from the record itself: zod's copy of it loses a `__proto__` key.
  const schema = z.unknown().transform((input, ctx) => {
    const parsed = known.safeParse(input);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.issues.push({ ...issue, path: [...issue.path] } as (typeof ctx.issues)[number]);
      return z.NEVER;
    }
    const out: Record<string, unknown> = {};
    for (const [key, column] of columns) out[column] = parsed.data[key] ?? null;
    const extra: Record<string, unknown> = {};
    for (const key of Object.keys(input as object))
      if (!Object.hasOwn(shape, key)) setExtra(extra, key, (input as Record<string, unknown>)[key]);
    out.extra = extra;
    return out as RecordOutput<S, Drop>;
  });
  fastParsers.set(schema, compileFast(shape, columns));
  return schema;
}

/**
 * Keys of `extra` that are ours: `_original` (the originals of values the database could not hold,
 * db/write/cleanText.ts) and `$product` (the product-level fields of event settings, events.ts).
 */
export const RESERVED_EXTRA_KEYS = ["_original", "$product"] as const;

// A reserved key or one already escaped (`_original`, `__original`, `_$product`...): one more `_`.
const ESCAPED_FORM = /^_*(?:_original|\$product)$/;

/** The key a server's field is kept under in `extra`: itself, or one `_` more where it would meet ours. */
export function extraKey(key: string): string {
  return ESCAPED_FORM.test(key) ? `_${key}` : key;
}

/** `extra[extraKey(key)] = value`, as an own property whatever the key (`__proto__` would set the prototype). */
export function setExtra(extra: Record<string, unknown>, key: string, value: unknown): void {
  const name = extraKey(key);
  if (name === "__proto__") Object.defineProperty(extra, name, { value, enumerable: true, writable: true, configurable: true });
  else extra[name] = value;
}

/** Parses one raw record: the output of zod, or INVALID where only zod can decide (and say why). */
export type FastParser = (raw: unknown) => unknown;

const fastParsers = new WeakMap<object, FastParser>();

/** The fast lane of a schema made by `recordSchema` (undefined for any other schema). */
export function fastParserOf(schema: z.ZodType): FastParser | undefined {
  return fastParsers.get(schema);
}

/**
 * Same output as the zod schema of `recordSchema` for the records it accepts (see fast.ts),
 * compiled to one function per schema: a straight run of property reads and checks, each call
 * site of a converter seeing one converter only (a loop over the fields made every call site
 * megamorphic, and cost 3 µs per record of thirty fields). The generated text holds nothing but
 * JSON-quoted key names and indexes into the converters passed in.
 */
function compileFast(shape: Shape, columns: readonly (readonly [string, string])[]): FastParser {
  const stored = new Set(columns.map(([key]) => key));
  const fields = [
    ...columns.map(([key, column]) => ({ key, column: column as string | null, fast: fastField(shape[key]!) })),
    // Dropped fields are validated all the same.
    ...Object.keys(shape)
      .filter((key) => !stored.has(key))
      .map((key) => ({ key, column: null, fast: fastField(shape[key]!) })),
  ];
  const q = (text: string) => JSON.stringify(text);
  const steps = fields.map(({ key, fast }, i) => {
    const v = `v${i}`;
    const read = `let ${v} = input[${q(key)}];`;
    const check =
      fast.kind === "string"
        ? `if (typeof ${v} !== "string") return INVALID;`
        : `${v} = checks[${i}](${v}); if (${v} === INVALID) return INVALID;`;
    return fast.optional
      ? `${read} if (${v} === undefined || ${v} === null) ${v} = null; else { ${check} }`
      : `${read} if (${v} === undefined) return INVALID; ${check}`;
  });
  const out = fields.flatMap(({ column }, i) => (column === null ? [] : [`${q(column)}: v${i} ?? null`]));
  // The schema's own keys are passed over by a switch (pointer compares of the parser's internalized
  // strings) instead of a call to hasOwn per key. Only a key starting with "_" or "$" can be
  // `__proto__` or of the form of ours (setExtra).
  const cases = Object.keys(shape).map((key) => `case ${q(key)}:`);
  const known = cases.length > 0 ? `switch (key) { ${cases.join(" ")} continue; }` : "";
  const source = `"use strict";
return function fastParse(input) {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return INVALID;
  ${steps.join("\n  ")}
  const extra = {};
  for (const key in input) {
    ${known}
    const c = key.charCodeAt(0);
    if (c === 95 || c === 36) setExtra(extra, key, input[key]);
    else extra[key] = input[key];
  }
  return { ${[...out, "extra"].join(", ")} };
};`;
  const checks = fields.map(({ fast }) => fast.check);
  return new Function("INVALID", "checks", "setExtra", source)(INVALID, checks, setExtra) as FastParser;
}

/** The snake_case output keys of a record shape, in declaration order, `extra` last. */
export function outputKeys(shape: Shape, drop: readonly string[] = []): string[] {
  return [
    ...Object.keys(shape)
      .filter((k) => !drop.includes(k))
      .map(snakeCase),
    "extra",
  ];
}

/** Marks a field optional: absent or null in the input, null in the output. */
export function opt<T extends z.ZodType>(schema: T) {
  return schema.nullish();
}
