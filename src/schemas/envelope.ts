// Envelope building blocks shared by every area. Envelopes keep the API's own key names (they are
// not rows) and leave the records array as unknown[]: records are validated one by one so that a bad
// record is quarantined instead of failing the page.
import { z } from "zod";
import { int } from "./primitives.ts";

/** The records array of an envelope, left for per-record parsing. */
export const recordsArray = z.array(z.unknown());

/**
 * "No data" answers: an empty body, JSON null, `[]` where an object is expected, and the event
 * history's `{"code":204,"result":"no content"}` (../shared/API-NOTES.md "Errors and rate limits").
 */
export function isNoData(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  if (typeof body === "string") return body.trim() === "";
  if (Array.isArray(body)) return body.length === 0;
  if (typeof body === "object") {
    const o = body as Record<string, unknown>;
    return Object.keys(o).length === 2 && Number(o.code) === 204 && typeof o.result === "string";
  }
  return false;
}

/**
 * `schema`, but a no-data answer parses to `empty` instead of failing: an empty envelope of the
 * same shape, or null (parseResponse then yields no records).
 */
export function orEmpty<T extends z.ZodType, const E extends z.output<T> | null>(schema: T, empty: E) {
  return z.unknown().transform((body, ctx): z.output<T> | E => {
    if (isNoData(body)) return empty;
    const result = schema.safeParse(body);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  });
}

/** A body that is itself the records array (event history, event settings, MXQL). */
export const bareArray = orEmpty(recordsArray, []);

/** Optional integer count (`total` is missing in some list envelopes, misspelt `totla` in old docs). */
export const optCount = int.nullish();
