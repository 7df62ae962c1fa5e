// An answer as the client reads it off the wire (api/page.ts), from a test's body: the text as
// given, or a value written as JSON (long integers and overflows exactly, as a server sends them).
import { Readable } from "node:stream";
import { stringify } from "lossless-json";
import { type Page, readPage } from "../../src/api/page.ts";
import { type ParsedResponse, parseResponse } from "../../src/api/parse-response.ts";
import { MemoryBudget } from "../../src/api/spool.ts";
import type { OperationDef } from "../../src/catalogue/types.ts";
import { parseJson } from "../../src/schemas/json.ts";

/** The body's bytes in chunks of `chunk` bytes (default: one chunk), read into a Page (`wholeBytes`: PageLimits'). */
export async function pageOf(
  op: OperationDef,
  body: unknown,
  opts: { chunk?: number; budget?: MemoryBudget; wholeBytes?: number } = {},
): Promise<Page> {
  const text = typeof body === "string" ? body : (stringify(body) ?? "");
  const bytes = Buffer.from(text, "utf8");
  const size = opts.chunk ?? Math.max(1, bytes.length);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const limits = {
    maxBytes: 2 ** 31,
    maxRecordBytes: 64 * 2 ** 20,
    budget: opts.budget ?? new MemoryBudget(64 * 2 ** 20),
    ...(opts.wholeBytes === undefined ? {} : { wholeBytes: opts.wholeBytes }),
  };
  const ctx = { ctx: { opId: op.id, pcode: undefined, path: op.path, attempt: 1 }, secrets: [], tokenHeader: "x-service-token" };
  return readPage(Readable.from(chunks), op, limits, ctx);
}

/** A whole answer parsed, as a probe reads it. */
export async function parsedOf(op: OperationDef, body: unknown): Promise<ParsedResponse> {
  const page = await pageOf(op, body);
  try {
    return parseResponse(op, page);
  } finally {
    page.dispose();
  }
}

/** An answer as one value again: its envelope with its records (parsed) back at their key. */
export function bodyOf(op: OperationDef, page: Page): unknown {
  const records: unknown[] = [];
  for (const batch of page.records.batches(1 << 20))
    records.push(...(batch.values() ?? Array.from({ length: batch.count }, (_, k) => parseJson(batch.text(k)))));
  const at = op.records?.at;
  if (at === undefined || records.length === 0) return page.envelope;
  if (at === null) return records;
  return { ...(page.envelope as object), [at]: records };
}
