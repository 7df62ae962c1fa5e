// A small answer parsed whole: one native JSON.parse of its body, in place of the record splitter's
// pass over every byte, the spool's copy and a parse a batch (split-records.ts, spool.ts). It is
// taken only where it reads exactly what the splitter would: the body parses, its records array
// is where the operation says and its key is written once, and no number in it needs its record's
// own text (json.ts). Anything else, a large body or the budget spent, goes through the splitter.
import { exactText, settledWithin } from "../schemas/json.ts";
import { isErrorObject, isNoContent } from "./body.ts";
import { inPieces, PIECE_BYTES, valueAt } from "./pieces.ts";
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
    return { root, list: valueAt(root, at) };
  } catch {
    return null;
  }
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
