// Parse at the edge (house rule 2): the envelope once, then each record on its own so that one bad
// record is quarantined with a reason while the rest of the page is kept. A large answer's records
// arrive as text (api/page.ts) and are parsed a batch at a time, as the write reads them: such a
// page is never one tree in memory. A small answer arrives parsed whole (api/whole-page.ts).

import type { OperationDef } from "../catalogue/types.ts";
import { INVALID } from "../kernel/fast.ts";
import { fastParserOf } from "../kernel/record.ts";
import { describeIssues, SchemaDriftError } from "../schemas/errors.ts";
import { exactText, holdsMarks, markedReason, parseJson } from "../schemas/json.ts";
import type { Page } from "./page.ts";

/** A record that failed its schema: its position in the page, the raw value, and why. */
export interface QuarantinedRecord {
  index: number;
  raw: unknown;
  reason: string;
}

/** Records of a page parsed together: typed row-shaped records and quarantined ones. */
export interface ParsedBatch {
  /** Parsed records (snake_case keys + `extra`), after `explode` when the operation has one. */
  records: unknown[];
  quarantined: QuarantinedRecord[];
}

/** A whole page parsed (small answers: probes, tests). */
export interface ParsedResponse extends ParsedBatch {
  /** Parsed envelope (API key names); null when the response carried no data. */
  envelope: unknown;
}

/** Text of records parsed at once: a batch's records are in memory together, parsed. */
export const BATCH_BYTES = 64 * 1024;

/**
 * Validates the envelope of a page of `op` (its records array left empty). Throws
 * SchemaDriftError when it does not match; null when the response carried no data.
 */
export function parseEnvelope(op: OperationDef, page: Page): unknown {
  const parsed = op.envelope.safeParse(page.envelope);
  if (!parsed.success) throw new SchemaDriftError(op.id, parsed.error, describeIssues(parsed.error));
  const envelope: unknown = parsed.data;
  if (envelope === null || envelope === undefined || !op.records) return envelope ?? null;
  const { at } = op.records;
  const list = at === null ? envelope : (envelope as Record<string, unknown>)[at];
  if (!Array.isArray(list)) {
    throw new SchemaDriftError(
      op.id,
      new Error(`records at ${at ?? "(body)"} is not an array`),
      `${at ?? "(body)"}: expected an array of records`,
    );
  }
  return envelope;
}

/**
 * The records of a page through their schema (and `explode`), a batch at a time; refused ones are
 * quarantined with why. `envelope` is parseEnvelope's. An operation without a records array
 * yields its envelope as its one record.
 */
export function* parseRecordBatches(op: OperationDef, page: Page, envelope: unknown, batchBytes = BATCH_BYTES): Generator<ParsedBatch> {
  if (envelope === null || envelope === undefined) return;
  if (!op.records) {
    yield { records: [envelope], quarantined: [] };
    return;
  }
  // Records the envelope holds itself: a form the splitter did not take apart (older servers'
  // series under `data`, mapped to the records key by the envelope's schema). The envelope's size is bounded.
  const held = recordsOf(op, envelope);
  let index = 0;
  if (held.length > 0) {
    const batch: ParsedBatch = { records: [], quarantined: [] };
    const marks = holdsMarks(page.envelope);
    for (const raw of held) parseRecord(op.records, { raw, marks }, index++, envelope, batch);
    yield batch;
  }
  for (const kept of page.records.batches(batchBytes)) {
    const batch: ParsedBatch = { records: [], quarantined: [] };
    // Parsed together; when that fails, each record alone, so that only a bad one is quarantined.
    const values = kept.values();
    for (let k = 0; k < kept.count; k++) {
      const source = values ? { raw: values[k], marks: holdsMarks(values[k]) } : kept.text(k);
      parseRecord(op.records, source, index++, envelope, batch);
    }
    yield batch;
  }
}

function recordsOf(op: OperationDef, envelope: unknown): unknown[] {
  const at = op.records?.at;
  const list = at === null ? envelope : (envelope as Record<string, unknown>)[at as string];
  return Array.isArray(list) ? list : [];
}

/** Every record of a small page at once, with its envelope (probes and tests). */
export function parseResponse(op: OperationDef, page: Page): ParsedResponse {
  const envelope = parseEnvelope(op, page);
  const out: ParsedResponse = { envelope, records: [], quarantined: [] };
  for (const batch of parseRecordBatches(op, page, envelope)) {
    out.records.push(...batch.records);
    out.quarantined.push(...batch.quarantined);
  }
  return out;
}

/**
 * One record's text: parsed, then its schema's fast lane or zod, then `explode`. A record that is
 * not JSON by itself, or holds a value cut for its depth or a number beyond a double (json.ts),
 * cannot be stored as it came: it is quarantined with its text.
 */
function parseRecord(
  { schema, explode }: NonNullable<OperationDef["records"]>,
  source: string | { readonly raw: unknown; readonly marks: boolean },
  index: number,
  envelope: unknown,
  out: ParsedBatch,
): void {
  let raw: unknown;
  let marks: boolean;
  if (typeof source === "string") {
    try {
      raw = parseJson(source);
    } catch (e) {
      out.quarantined.push({ index, raw: source, reason: `not valid JSON: ${(e as Error).message}` });
      return;
    }
    marks = holdsMarks(raw);
  } else ({ raw, marks } = source);
  const marked = marks ? markedReason(raw) : null;
  if (marked !== null) {
    out.quarantined.push({ index, raw: exactText(raw), reason: marked });
    return;
  }
  let data: unknown = fastParserOf(schema)?.(raw) ?? INVALID;
  if (data === INVALID) {
    const result = schema.safeParse(raw);
    if (!result.success) {
      out.quarantined.push({ index, raw, reason: describeIssues(result.error) });
      return;
    }
    data = result.data;
  }
  if (!explode) {
    out.records.push(data);
    return;
  }
  try {
    out.records.push(...(explode as (r: unknown, e: unknown) => unknown[])(data, envelope));
  } catch (e) {
    // explode is pure; a throw means the record has a shape the schema let through: keep the page.
    out.quarantined.push({ index, raw, reason: `cannot flatten record: ${(e as Error).message}` });
  }
}
