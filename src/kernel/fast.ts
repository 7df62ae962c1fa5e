// A fast lane for record validation. zod stays the definition of every record; this compiles, once
// per record schema, a plain function that accepts a record only where zod would accept it with
// the same output, and answers INVALID for anything it is not sure of, so that zod decides
// (and writes the quarantine reason). Records of a 10,000-record page are nearly always clean:
// they take the fast lane; a record with a quirk takes zod's.
import type { z } from "zod";

/** "Not accepted here": the caller falls back to zod. */
export const INVALID: unique symbol = Symbol("invalid");
export type Invalid = typeof INVALID;

/** A converter of one present value: the same output zod gives, or INVALID. */
type FastCheck = (value: unknown) => unknown;

const converters = new WeakMap<object, FastCheck>();

/** Declares that `schema` accepts exactly the values `convert` accepts, with its output (see `coerce`). */
export function registerFast<S extends z.ZodType>(schema: S, convert: FastCheck): S {
  converters.set(schema, convert);
  return schema;
}

/**
 * How the fast lane checks one field: `convert` (a registered converter), `string` (a plain
 * string), or `other` (the field schema's own safeParse). `optional`: `.nullish()`, so absent and
 * null give null. A required field that is absent is always left to zod.
 */
export interface FastField {
  readonly kind: "convert" | "string" | "other";
  readonly check: FastCheck;
  readonly optional: boolean;
}

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  /** An array's element schema. */
  readonly element?: z.ZodType;
  readonly checks?: readonly unknown[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

export function fastField(schema: z.ZodType, optional = false): FastField {
  const registered = converters.get(schema);
  if (registered) return { kind: "convert", check: registered, optional };
  const def = defOf(schema);
  if (!optional && def.type === "optional" && def.innerType && defOf(def.innerType).type === "nullable") {
    const nullable = defOf(def.innerType).innerType;
    if (nullable) return fastField(nullable, true);
  }
  if (def.type === "string" && (def.checks?.length ?? 0) === 0) return { kind: "string", check: (v) => v, optional };
  const list = def.type === "array" && (def.checks?.length ?? 0) === 0 ? listCheck(def.element) : null;
  if (list) return { kind: "convert", check: list, optional };
  return {
    kind: "other",
    check: (v) => {
      const r = schema.safeParse(v);
      return r.success ? r.data : INVALID;
    },
    optional,
  };
}

/** A list of anything, or of plain strings, checked without zod (its output is an equal array); null for other elements. */
function listCheck(element: z.ZodType | undefined): FastCheck | null {
  const def = element ? defOf(element) : null;
  if (def === null || (def.checks?.length ?? 0) > 0) return null;
  if (def.type === "unknown") return (v) => (Array.isArray(v) ? v : INVALID);
  if (def.type !== "string") return null;
  return (v) => {
    if (!Array.isArray(v)) return INVALID;
    for (const item of v) if (typeof item !== "string") return INVALID;
    return v;
  };
}
