// A small answer parsed whole: one native JSON.parse of its body, in place of the record splitter's
// pass over every byte, the spool's copy and a parse a batch (split-records.ts, spool.ts). It is
// taken only where it reads exactly what the splitter would: the body parses, its records array
// is where the operation says and its key is written once, and no number in it needs its record's
// own text (json.ts). Anything else, a large body or the budget spent, goes through the splitter.
import { exactText, settledWithin } from "../schemas/json.ts";
import { isErrorObject, isNoContent } from "./body.ts";
import type { MemoryBudget, PageRecords, RecordBatch } from "./spool.ts";

/** Bodies up to this size are held as they arrive and parsed whole. */
export const WHOLE_BYTES = 256 * 1024;

/**
 * What parsed records are charged to the budget, per byte of their body. Measured: the statistics'
 * records take 1.23 bytes of heap a byte of JSON (240 answers of 2 projects x 24 hours).
 */
const PARSED_PER_BYTE = 2;

/**
 * The body of an answer held whole while it stays small, its bytes drawn from the process's budget.
 * Once it lets go of them (released, or parsed) it holds nothing more: the body is split from then on.
 */
export class WholeBody {
  #chunks: Buffer[] = [];
  /** Bytes held, and drawn from the budget. */
  #size = 0;
  #open = true;

  constructor(
    private readonly budget: MemoryBudget,
    private readonly limit: number,
    /** The operation's records key (null: the body is the records array). */
    private readonly at: string | null,
  ) {}

  /** Holds `chunk`; false when the body outgrows the limit or the budget, or was let go (then it is split, chunks held first). */
  add(chunk: Buffer): boolean {
    if (!this.#open || this.#size + chunk.length > this.limit || !this.budget.take(chunk.length)) return false;
    this.#size += chunk.length;
    this.#chunks.push(chunk);
    return true;
  }

  /** The chunks held, in order. */
  get chunks(): readonly Buffer[] {
    return this.#chunks;
  }

  /** Gives back what it holds; safe to call more than once. */
  release(): void {
    this.budget.give(this.#size);
    this.#let();
  }

  /**
   * The body parsed: the envelope (records array left empty) and the records, which take over its
   * charge; null where only the splitter reads it exactly (the chunks are kept for it).
   */
  parse(): { envelope: unknown; records: ParsedRecords } | null {
    const more = this.#size * (PARSED_PER_BYTE - 1);
    if (!this.#open || !this.budget.take(more)) return null;
    const parsed = this.#read(this.at);
    if (parsed === null) {
      this.budget.give(more);
      return null;
    }
    const records = new ParsedRecords(parsed.list, this.#size, this.budget);
    this.#let();
    return { envelope: parsed.envelope, records };
  }

  #let(): void {
    this.#open = false;
    this.#size = 0;
    this.#chunks = [];
  }

  #read(at: string | null): { envelope: unknown; list: unknown[] } | null {
    const bytes = Buffer.concat(this.#chunks, this.#size);
    // A second records key would be the last one for JSON.parse, an error for the splitter. Spelt
    // with \u escapes, a key the search below does not see: a body holding any goes to the splitter.
    if (at !== null && (!keyOnce(bytes, at) || bytes.includes("\\u"))) return null;
    const read = (bytes.length > 2 * PIECE_BYTES ? inPieces(bytes, at) : undefined) ?? whole(bytes, at);
    if (read === null) return null;
    const { root, list } = read;
    if (!Array.isArray(list)) return null;
    const envelope = at === null ? [] : settledWithin({ ...(root as object), [at]: [] });
    if (envelope === undefined || isErrorObject(envelope) || isNoContent(envelope)) return null;
    for (let k = 0; k < list.length; k++) {
      const value = settledWithin(list[k]);
      if (value === undefined) return null;
      list[k] = value;
    }
    return { envelope, list };
  }
}

/** The body parsed in one piece: its root and the value at its records key; null when it does not parse. */
function whole(bytes: Buffer, at: string | null): { root: unknown; list: unknown } | null {
  try {
    const root: unknown = JSON.parse(bytes.toString("utf8"));
    return { root, list: at === null ? root : isRecord(root) ? root[at] : undefined };
  } catch {
    return null;
  }
}

/**
 * Records are parsed a piece of about this many bytes at a time in a body of more than twice it. A
 * string of more than 128 KiB is one of V8's large objects, its pages mapped afresh and faulted in
 * on each answer: a 181 KB body took 8.7 ns a byte to decode and parse whole, 3.6 in pieces; under
 * 128 KiB both 2.5-3 (docs/benchmarks.md).
 */
export const PIECE_BYTES = 64 * 1024;

/** Where records part: the comma of `},{` (a cut inside a string or a nested array fails to parse). */
const BETWEEN = Buffer.from("},{");

/**
 * The body parsed in pieces, exactly as JSON.parse reads it whole: the envelope with its records
 * array written empty, and the records array's text a piece at a time, cut after a record's `}`.
 * undefined where that cannot be shown (whole parses it then). The records key is written once
 * (keyOnce), so an envelope that parses with an empty array at it found the array's true start;
 * each piece starts where a record does, or the one before it ended inside a string or a nested
 * value and did not parse; so the records are the array's. The array ends at the body's last `]`:
 * one in the envelope after it leaves pieces that do not parse.
 */
export function inPieces(bytes: Buffer, at: string | null): { root: unknown; list: unknown[] } | undefined {
  const open = arrayStart(bytes, at);
  const close = bytes.lastIndexOf(0x5d);
  if (open < 0 || close <= open) return undefined;
  try {
    const root: unknown = JSON.parse(`${bytes.toString("utf8", 0, open)}[]${bytes.toString("utf8", close + 1)}`);
    const empty = at === null ? root : isRecord(root) ? root[at] : undefined;
    if (!Array.isArray(empty) || empty.length > 0) return undefined;
    const list: unknown[] = [];
    for (let from = open + 1; from < close; ) {
      const piece = nextPiece(bytes, from, close);
      if (piece === undefined) return undefined;
      for (const record of piece.records) list.push(record);
      from = piece.cut + 1;
    }
    return { root: at === null ? list : root, list };
  } catch {
    return undefined;
  }
}

/** Cuts tried for a piece: past a `},{` inside a string or a nested value, the next ones. */
const CUTS_TRIED = 8;

/** The records from `from` (a record's start) to a cut (a comma between records, or `close`); undefined if none of the cuts tried parses. */
function nextPiece(bytes: Buffer, from: number, close: number): { records: unknown[]; cut: number } | undefined {
  let next = bytes.indexOf(BETWEEN, from + PIECE_BYTES);
  for (let tried = 0; tried < CUTS_TRIED; tried++) {
    const cut = next < 0 || next >= close ? close : next + 1;
    try {
      const records: unknown = JSON.parse(`[${bytes.toString("utf8", from, cut)}]`);
      return Array.isArray(records) ? { records, cut } : undefined;
    } catch {
      if (cut === close) return undefined;
      next = bytes.indexOf(BETWEEN, next + 1);
    }
  }
  return undefined;
}

/** The index of the records array's `[`: the body's first byte past white space, or the value of `"at"`; -1 if not there. */
function arrayStart(bytes: Buffer, at: string | null): number {
  let i = at === null ? 0 : bytes.indexOf(`"${at}"`);
  if (i < 0) return -1;
  if (at !== null) {
    i = pastSpace(bytes, i + at.length + 2);
    if (bytes[i] !== 0x3a) return -1;
    i = pastSpace(bytes, i + 1);
  } else i = pastSpace(bytes, i);
  return bytes[i] === 0x5b ? i : -1;
}

/** The first index from `i` that is not JSON white space. */
function pastSpace(bytes: Buffer, i: number): number {
  while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i++;
  return i;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `"key"` is written once in `bytes` (in a string too: then the splitter reads the body).
 * The search is for `key"`, whose first byte is rarer than a quote: a fifth of the time.
 */
function keyOnce(bytes: Buffer, key: string): boolean {
  const needle = `${key}"`;
  let found = 0;
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + needle.length)) {
    if (at > 0 && bytes[at - 1] === 0x22 && ++found > 1) return false;
  }
  return found === 1;
}

/** An answer's records parsed whole, read back in batches of about as many records as a batch of text holds. */
class ParsedRecords implements PageRecords {
  #list: unknown[];
  /** Drawn from the budget: PARSED_PER_BYTE a byte of the body, until disposed of. */
  #held: number;
  #disposed = false;

  constructor(
    list: unknown[],
    private readonly bytes: number,
    private readonly budget: MemoryBudget,
  ) {
    this.#list = list;
    this.#held = bytes * PARSED_PER_BYTE;
  }

  get count(): number {
    return this.#list.length;
  }

  get spilled(): boolean {
    return false;
  }

  *batches(maxBytes: number): Generator<RecordBatch> {
    // As the spool does: a page read after it was disposed of would write no rows, silently.
    if (this.#disposed) throw new Error("the records were disposed of");
    const list = this.#list;
    const each = Math.max(1, Math.floor((list.length * maxBytes) / Math.max(1, this.bytes)));
    for (let i = 0; i < list.length; i += each) yield new ParsedBatch(list.slice(i, i + each));
  }

  readonly parsed = true;

  get charged(): number {
    return this.#held;
  }

  letGo(keep: number): void {
    const give = Math.max(0, this.#held - keep);
    this.budget.give(give);
    this.#held -= give;
    this.#disposed = true;
    this.#list = [];
  }

  dispose(): void {
    this.#disposed = true;
    this.budget.give(this.#held);
    this.#held = 0;
    this.#list = [];
  }
}

class ParsedBatch implements RecordBatch {
  constructor(private readonly list: unknown[]) {}

  get count(): number {
    return this.list.length;
  }

  values(): unknown[] {
    return this.list;
  }

  /** The record written again (its long numbers exactly). */
  text(k: number): string {
    return exactText(this.list[k]);
  }
}
