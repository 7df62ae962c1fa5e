// v2 aggregated statistics (spec "Aggregated statistics records"): the envelope and the request. The
// records' fields are declared with their columns in catalogue/dictionary/stats.ts.
import { z } from "zod";
import { count, int } from "../kernel/primitives.ts";
import { opt } from "../kernel/record.ts";
import { objectEnvelope, recordsArray } from "./envelope.ts";

// `total` counts every matching record, `retrievedTotal` those returned (spec rule 3): a total
// below it is a lie about the answer, and the window is not recorded on its word.
export const statsEnvelope = objectEnvelope(
  z
    .looseObject({ stime: opt(int), etime: opt(int), timestamp: opt(int), total: count, retrievedTotal: count, data: recordsArray })
    .superRefine((e, ctx) => {
      if (e.total < e.retrievedTotal)
        ctx.addIssue({
          code: "custom",
          path: ["total"],
          message: `${e.total} is below retrievedTotal ${e.retrievedTotal}`,
          input: e.total,
        });
    }),
);

const base = { stime: z.number().int().nonnegative(), etime: z.number().int().nonnegative(), order: z.string().optional() };

/** Request payload: stime, etime, order; `filter` (both host and port) only for httpc. */
export function statRequest(type: "transaction" | "sql" | "httpc" | "error" | "remote") {
  const shape = type === "httpc" ? { ...base, filter: z.strictObject({ host: z.string(), port: z.string() }).optional() } : base;
  return z.strictObject(shape).refine((b) => b.etime - b.stime <= 86_400_000 && b.etime > b.stime, {
    message: "etime must be after stime and at most 24 hours later",
  });
}
