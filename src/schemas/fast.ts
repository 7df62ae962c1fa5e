// A fast lane for record validation. zod stays the definition of every record; this compiles, once
// per record schema, a plain function that accepts a record only where zod would accept it with
// the same output, and answers INVALID for anything it is not sure of, so that zod decides
// (and writes the quarantine reason). Records of a 10,000-record page are nearly always clean:
// they take the fast lane; a record with a quirk takes zod's.
import type { z } from "zod";

/** "Not accepted here": the caller falls back to zod. */
export const INVALID: unique symbol = Symbol("invalid");
export type Invalid = typeof INVALID;

/** A converter of one value: the same output zod gives, or INVALID. */
export type FastCheck = (value: unknown) => unknown;

const converters = new WeakMap<object, FastCheck>();

/** Declares that `schema` accepts exactly the values `convert` accepts, with its output (see `coerce`). */
export function registerFast<S extends z.ZodType>(schema: S, convert: FastCheck): S {
  converters.set(schema, convert);
  return schema;
}

interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly checks?: readonly unknown[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * The fast check of a field schema: a registered converter, `.nullish()` of one (null and absent
 * give undefined, as zod), a plain string; any other schema is asked through its own safeParse.
 * Absent values (undefined) of a required field are left to zod.
 */
export function fastCheck(schema: z.ZodType): FastCheck {
  const registered = converters.get(schema);
  if (registered) return (v) => (v === undefined ? INVALID : registered(v));
  const def = defOf(schema);
  if (def.type === "optional" && def.innerType && defOf(def.innerType).type === "nullable") {
    const nullable = defOf(def.innerType).innerType;
    if (nullable) {
      const inner = fastCheck(nullable);
      return (v) => (v === undefined ? undefined : v === null ? null : inner(v));
    }
  }
  if (def.type === "string" && (def.checks?.length ?? 0) === 0) return (v) => (typeof v === "string" ? v : INVALID);
  return (v) => {
    if (v === undefined) return INVALID;
    const r = schema.safeParse(v);
    return r.success ? r.data : INVALID;
  };
}
