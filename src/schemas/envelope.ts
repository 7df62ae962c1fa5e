// Envelope building blocks shared by every area. Envelopes keep the API's own key names (they are
// not rows) and leave the records array as unknown[]: records are validated one by one so that a bad
// record is quarantined instead of failing the page.
import { z } from "zod";
import { int } from "../kernel/primitives.ts";

/** The records array of an envelope, left for per-record parsing. */
export const recordsArray = z.array(z.unknown());

/**
 * The documented "no data" answers, of event history only (docs/api-notes.md "Errors and
 * rate limits"): an empty body, `[]`, and `{"code":204,"result":"no content"}`.
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

const OBJECT_ENVELOPES = new WeakSet<z.ZodType>();

/**
 * The envelope of an operation that answers a JSON object. No "no data" form is documented for
 * these: an empty body, `null`, `[]` or a scalar on a 200 is an answer that did not arrive. The
 * client retries it as a failed request (api/body.ts, `answersObject`); recording it as an empty
 * window would mark hours `done` whose data never came (issue 21).
 */
export function objectEnvelope<T extends z.ZodType>(schema: T): T {
  OBJECT_ENVELOPES.add(schema);
  return schema;
}

/** Whether an operation's envelope is an object (`objectEnvelope`). */
export function answersObject(envelope: z.ZodType): boolean {
  return OBJECT_ENVELOPES.has(envelope);
}

/** A body that is itself the records array (event history, event settings, MXQL); a no-data answer is `[]`. */
export const bareArray = z.unknown().transform((body, ctx): unknown[] => {
  if (isNoData(body)) return [];
  const result = recordsArray.safeParse(body);
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

/** Optional integer count (`total` is missing in some list envelopes, misspelt `totla` in old docs). */
export const optCount = int.nullish();
