// A 2xx answer read as it streams in (api/send.ts): a small one is held and parsed whole
// (whole-page.ts); a larger one's records go to a spool as their bytes arrive (split-records.ts,
// spool.ts), its envelope is parsed once it is complete. Memory is bounded by the process's budget
// whatever the answer's size; the body cap still applies.
import type { Readable } from "node:stream";
import type { OperationDef } from "../catalogue/types.ts";
import { answersObject } from "../schemas/envelope.ts";
import { parseJson } from "../schemas/json.ts";
import { RecordSplitter, SplitError } from "../schemas/split-records.ts";
import { discard, type InterpretContext, isNoContent, rejectErrorObject } from "./body.ts";
import { AnswerTooLargeError, EmptyAnswerError, excerpt, NonJsonBodyError, ResponseTooLargeError } from "./errors.ts";
import { type MemoryBudget, type PageRecords, RecordSpool, RecordTooLargeError } from "./spool.ts";
import { WHOLE_BYTES, WholeBody } from "./whole-page.ts";

/** One answer: the envelope parsed (its records array left empty), the records (as text, or parsed whole). */
export interface Page {
  /** The body without its records (bigint-safe); the trimmed text for `text` operations; [] for a bare array. */
  readonly envelope: unknown;
  /** The records array's elements, in order (none for operations without records). */
  readonly records: PageRecords;
  /** Bytes of the body. */
  readonly bytes: number;
  /** Frees the records' memory or file. */
  dispose(): void;
}

/** What reading an answer may hold. */
export interface PageLimits {
  /** The body cap (api.maxResponseBytes). */
  readonly maxBytes: number;
  /** The largest record (and envelope) held as one text. */
  readonly maxRecordBytes: number;
  /** Shared by every answer in flight. */
  readonly budget: MemoryBudget;
  /** The largest body parsed whole (whole-page.ts; WHOLE_BYTES unless given): larger ones are split as they arrive. */
  readonly wholeBytes?: number;
}

// Kept of a body for the message of an answer that is not JSON.
const HEAD_BYTES = 200;

/** Reads a 2xx body of `op` into a Page; throws the typed errors of api/errors.ts. */
export async function readPage(body: Readable, op: OperationDef, limits: PageLimits, ic: InterpretContext): Promise<Page> {
  const records = new RecordSpool(limits.budget, limits.maxRecordBytes);
  // A body no larger than a record may be is held whole: no record in it can be refused for its size.
  const at = wholeRecordsAt(op);
  const whole =
    at === undefined ? null : new WholeBody(limits.budget, Math.min(limits.wholeBytes ?? WHOLE_BYTES, limits.maxRecordBytes), at);
  try {
    return await read(body, op, limits, ic, { records, whole });
  } catch (e) {
    records.dispose();
    whole?.release();
    discard(body);
    if (e instanceof RecordTooLargeError) throw new AnswerTooLargeError(e.message, ic.ctx, { secrets: ic.secrets });
    throw e;
  }
}

async function read(
  body: Readable,
  op: OperationDef,
  limits: PageLimits,
  ic: InterpretContext,
  { records, whole }: { records: RecordSpool; whole: WholeBody | null },
): Promise<Page> {
  const envelope = new Envelope(limits.maxRecordBytes);
  const text = op.format === "text";
  const splitter = new RecordSplitter(text ? undefined : op.records ? op.records.at : undefined, {
    envelope: (b) => envelope.add(b),
    record: (b) => records.record(b),
    endRecord: () => records.endRecord(),
  });
  const head: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limits.maxBytes) throw new ResponseTooLargeError(limits.maxBytes, ic.ctx, { secrets: ic.secrets });
    if (size - chunk.length < HEAD_BYTES) head.push(chunk.subarray(0, HEAD_BYTES));
    if (text) envelope.add(chunk);
    else if (whole?.add(chunk)) continue;
    else {
      splitHeld(splitter, whole, head, ic);
      split(splitter, chunk, head, ic);
    }
  }
  const parsed = whole?.parse();
  if (parsed) return { envelope: parsed.envelope, records: parsed.records, bytes: size, dispose: () => parsed.records.dispose() };
  splitHeld(splitter, whole, head, ic);
  if (!text) split(splitter, null, head, ic);
  const value = text ? interpretText(envelope.text(), ic) : interpretJson(op, envelope.text(), splitter.empty, head, ic);
  return { envelope: value, records, bytes: size, dispose: () => records.dispose() };
}

/**
 * The records key of `op` when a small answer of it may be parsed whole (null: the body is the
 * array); undefined for a text answer, an operation without records, or one whose records are the
 * body while its envelope must be an object (interpretJson refuses such an answer).
 */
function wholeRecordsAt(op: OperationDef): string | null | undefined {
  if (op.format === "text" || op.records === undefined) return undefined;
  return op.records.at === null && answersObject(op.envelope) ? undefined : op.records.at;
}

/** The chunks a WholeBody held, fed to the splitter and given back (none once it let go of them). */
function splitHeld(splitter: RecordSplitter, whole: WholeBody | null, head: Buffer[], ic: InterpretContext): void {
  if (whole === null) return;
  for (const chunk of whole.chunks) split(splitter, chunk, head, ic);
  whole.release();
}

/** Feeds the splitter (null: the body ended); a body that is not one JSON value is a NonJsonBodyError. */
function split(splitter: RecordSplitter, chunk: Buffer | null, head: Buffer[], ic: InterpretContext): void {
  try {
    if (chunk) splitter.push(chunk);
    else splitter.end();
  } catch (e) {
    if (e instanceof SplitError) throw notJson(head, ic, e);
    throw e;
  }
}

function notJson(head: Buffer[], ic: InterpretContext, cause?: Error): NonJsonBodyError {
  const text = Buffer.concat(head).toString("utf8").trim();
  return new NonJsonBodyError(text, ic.ctx, { secrets: ic.secrets, ...(cause ? { cause } : {}) });
}

/** The envelope's bytes: everything of the body but its records. */
class Envelope {
  readonly #parts: Buffer[] = [];
  #size = 0;
  constructor(private readonly max: number) {}

  add(bytes: Uint8Array): void {
    this.#size += bytes.length;
    if (this.#size > this.max)
      throw new RecordTooLargeError(
        `the answer's envelope (the body without its records) is larger than ${this.max} bytes (APM_MAX_RECORD_BYTES)`,
      );
    this.#parts.push(Buffer.from(bytes));
  }

  text(): string {
    return Buffer.concat(this.#parts, this.#size).toString("utf8");
  }
}

/** `text` operations (scalars `5`, `93.07`, `"66.0"`): the trimmed text, unless it is a JSON error object. */
function interpretText(text: string, ic: InterpretContext): string {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = parseJson(trimmed);
    } catch {
      return trimmed;
    }
    rejectErrorObject(parsed, trimmed, ic);
  }
  return trimmed;
}

/**
 * The envelope of a json answer. An empty body is `[]` where the operation answers a bare array
 * (event history answers empty bodies for no data), and an error (EmptyAnswerError, retried)
 * where it answers an object. A JSON error object on a 200 is an error, not data (docs/api-notes.md "Errors and rate limits").
 */
function interpretJson(op: OperationDef, text: string, empty: boolean, head: Buffer[], ic: InterpretContext): unknown {
  const object = answersObject(op.envelope);
  if (empty) {
    if (object) throw new EmptyAnswerError("an empty body", ic.ctx, { secrets: ic.secrets });
    return [];
  }
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (e) {
    throw notJson(head, ic, e as Error);
  }
  // Event history may answer {"code":204,"result":"no content"} for "no data" (docs/api-notes.md): only
  // bare-array operations get [] for it; an operation answering an object has no such form.
  if (isNoContent(parsed) && op.records?.at === null) return [];
  if (object && (isNoContent(parsed) || parsed === null || typeof parsed !== "object" || Array.isArray(parsed))) {
    const trimmed = text.trim();
    throw new EmptyAnswerError(excerpt(trimmed, 40, ic.secrets), ic.ctx, { secrets: ic.secrets });
  }
  rejectErrorObject(parsed, text.trim(), ic);
  return parsed;
}
