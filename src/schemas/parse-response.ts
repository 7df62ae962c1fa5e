// Parse at the edge (house rule 2): the envelope once, then each record on its own so that one bad
// record is quarantined with a reason while the rest of the page is kept.
import type { OperationDef } from "../catalogue/types.ts";
import { describeIssues, SchemaDriftError } from "./errors.ts";
import { INVALID } from "./fast.ts";
import { exactText, holdsMarks, markedReason } from "./json.ts";
import { fastParserOf } from "./record.ts";

/** A record that failed its schema: its position in the page, the raw value, and why. */
export interface QuarantinedRecord {
  index: number;
  raw: unknown;
  reason: string;
}

/** Result of `parseResponse`: the parsed envelope, typed row-shaped records, quarantined records. */
export interface ParsedResponse {
  /** Parsed envelope (API key names); null when the response carried no data. */
  envelope: unknown;
  /** Parsed records (snake_case keys + `extra`), after `explode` when the operation has one. */
  records: unknown[];
  quarantined: QuarantinedRecord[];
}

/**
 * Validates a response body of `op`: JSON value (from parseJson) for `json` operations, the raw
 * text for `text` operations. Throws SchemaDriftError when the envelope does not match.
 */
export function parseResponse(op: OperationDef, body: unknown): ParsedResponse {
  const parsed = op.envelope.safeParse(body);
  if (!parsed.success) throw new SchemaDriftError(op.id, parsed.error, describeIssues(parsed.error));
  const envelope: unknown = parsed.data;
  if (envelope === null || envelope === undefined) return { envelope: null, records: [], quarantined: [] };
  if (!op.records) return { envelope, records: [envelope], quarantined: [] };

  const { at } = op.records;
  const list = at === null ? envelope : (envelope as Record<string, unknown>)[at];
  if (!Array.isArray(list)) {
    throw new SchemaDriftError(
      op.id,
      new Error(`records at ${at ?? "(body)"} is not an array`),
      `${at ?? "(body)"}: expected an array of records`,
    );
  }
  return { envelope, ...parseRecords(op.records, list, envelope, holdsMarks(body)) };
}

/**
 * Each record of a page through its schema (and `explode`); refused ones are quarantined with
 * why. A record holding a value cut for its depth or a number beyond a double (`marks`: the page
 * has some) cannot be stored as it came: it is quarantined with its exact text (json.ts), the rest
 * of the page is kept.
 */
function parseRecords(
  { schema, explode }: NonNullable<OperationDef["records"]>,
  list: unknown[],
  envelope: unknown,
  marks: boolean,
): Pick<ParsedResponse, "records" | "quarantined"> {
  const records: unknown[] = [];
  const quarantined: QuarantinedRecord[] = [];
  // Clean records take the schema's fast lane; zod decides the rest, and says why it refuses one.
  const fast = fastParserOf(schema);
  list.forEach((raw: unknown, index) => {
    const marked = marks ? markedReason(raw) : null;
    if (marked !== null) {
      quarantined.push({ index, raw: exactText(raw), reason: marked });
      return;
    }
    let data = fast ? fast(raw) : INVALID;
    if (data === INVALID) {
      const result = schema.safeParse(raw);
      if (!result.success) {
        quarantined.push({ index, raw, reason: describeIssues(result.error) });
        return;
      }
      data = result.data;
    }
    if (!explode) {
      records.push(data);
      return;
    }
    try {
      records.push(...(explode as (r: unknown, e: unknown) => unknown[])(data, envelope));
    } catch (e) {
      // explode is pure; a throw means the record has a shape the schema let through: keep the page.
      quarantined.push({ index, raw, reason: `cannot flatten record: ${(e as Error).message}` });
    }
  });
  return { records, quarantined };
}
