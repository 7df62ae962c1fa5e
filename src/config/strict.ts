// Config objects refuse keys they do not know, naming the key and what it may be.
import { z } from "zod";
import { didYouMean } from "./suggest.ts";

/** An object whose unknown keys are each named, with the closest known key. */
export function strictObject<S extends z.core.$ZodLooseShape>(shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? iss.keys.map((k) => `unknown key ${JSON.stringify(k)}${didYouMean(k, known)}`).join("; ")
        : undefined,
  });
}
