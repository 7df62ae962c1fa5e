// The records of one answer, kept as their JSON text until the write reads them back in batches.
// Their bytes stay in memory while the process-wide budget grants it (MemoryBudget: every
// answer in flight draws on the same one), and go to a temporary file beyond it, so that the
// memory an answer takes does not grow with its size nor with how many are in flight. The file is
// unlinked as soon as it is opened: the system frees it whenever the process ends, however.
import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonElements } from "../schemas/json.ts";
import type { SplitSink } from "../schemas/split-records.ts";

/** Bytes of answers held in memory by every request of the process together. */
export class MemoryBudget {
  #used = 0;
  constructor(readonly limit: number) {}

  take(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#used -= bytes;
  }

  get used(): number {
    return this.#used;
  }
}

/** A record, or a page's count of them, beyond what the process may hold: the window fails, naming the setting. */
export class RecordTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RecordTooLargeError";
  }
}

const BLOCK = 64 * 1024;
const COMMA = Uint8Array.of(0x2c);
/** Records of one answer at most: their offsets are kept in memory (4 bytes each). */
export const MAX_RECORDS = 2_000_000;

/** Consecutive records of one answer, read back together. */
export interface RecordBatch {
  readonly count: number;
  /**
   * Every record as parseJson reads it from its own text (json.ts); null when they do not parse
   * together, so that each is read alone by `text` and only a bad one is refused.
   */
  values(): unknown[] | null;
  /** Record `k`'s own text (0 <= k < count). */
  text(k: number): string;
}

/** An answer's records, however they were kept: spooled as text here, or parsed whole (whole-page.ts). */
export interface PageRecords {
  readonly count: number;
  /** Whether they went to a file (the budget was spent). */
  readonly spilled: boolean;
  /** The records in order, in batches of about `maxBytes` of text (at least one record each). */
  batches(maxBytes: number): Iterable<RecordBatch>;
  /** Whether they are held parsed (an answer parsed whole), not as text or in a file. */
  readonly parsed: boolean;
  /** Bytes of the memory budget they hold, given back by `dispose`. */
  readonly charged: number;
  /**
   * Lets go of records held parsed once their rows are encoded (engine/encode-early.ts), keeping
   * `keep` bytes of their charge (at most `charged`: the encoded rows') on the budget until
   * `dispose`; reading them again throws. Nothing for others.
   */
  letGo(keep: number): void;
  /** Frees their memory or file; safe to call more than once. */
  dispose(): void;
}

/** A batch over its bytes: the records' texts, each followed by a comma; `ends` are absolute offsets, `base` the first's. */
class SpooledBatch implements RecordBatch {
  constructor(
    private readonly bytes: Buffer,
    private readonly ends: Uint32Array,
    private readonly base: number,
  ) {}

  get count(): number {
    return this.ends.length;
  }

  /** One native parse of the batch as the text of one JSON array, `[r1,r2,...]`. */
  values(): unknown[] | null {
    const array = `[${this.bytes.toString("utf8", 0, this.bytes.length - 1)}]`;
    return parseJsonElements(array, this.count, (k) => this.text(k));
  }

  text(k: number): string {
    const start = k === 0 ? 0 : this.ends[k - 1]! + 1 - this.base;
    return this.bytes.toString("utf8", start, this.ends[k]! - this.base);
  }
}

/** One answer's records as text: appended by the splitter, read back in order, in batches. */
export class RecordSpool implements SplitSink, PageRecords {
  readonly #budget: MemoryBudget;
  readonly #maxRecordBytes: number;
  /** Blocks held in memory (each BLOCK bytes, drawn from the budget), or the write buffer once spilled. */
  #blocks: Buffer[] = [];
  #fill = 0;
  /** Bytes drawn from the budget, given back by dispose. */
  #held = 0;
  #fd: number | null = null;
  #flushed = 0;
  #size = 0;
  #recordStart = 0;
  #ends = new Uint32Array(1024);
  #count = 0;
  #disposed = false;

  constructor(budget: MemoryBudget, maxRecordBytes: number) {
    this.#budget = budget;
    this.#maxRecordBytes = maxRecordBytes;
  }

  /** Records held. */
  get count(): number {
    return this.#count;
  }

  get spilled(): boolean {
    return this.#fd !== null;
  }

  envelope(): void {
    throw new Error("RecordSpool holds records only");
  }

  record(bytes: Uint8Array): void {
    if (this.#size + bytes.length - this.#recordStart > this.#maxRecordBytes)
      throw new RecordTooLargeError(
        `a record of the answer is larger than ${mib(this.#maxRecordBytes)} (APM_MAX_RECORD_BYTES); raise it if such records are expected`,
      );
    this.#append(bytes);
  }

  endRecord(): void {
    if (this.#count === MAX_RECORDS)
      throw new RecordTooLargeError(`the answer holds more than ${MAX_RECORDS} records; fetch smaller windows (APM_GRAIN)`);
    if (this.#count === this.#ends.length) {
      const more = new Uint32Array(this.#ends.length * 2);
      more.set(this.#ends);
      this.#ends = more;
    }
    this.#ends[this.#count++] = this.#size;
    // A comma after each record: a batch of them reads back as the elements of one JSON array.
    this.#append(COMMA);
    this.#recordStart = this.#size;
  }

  /** Reading needs no memory beyond one batch, wherever the records are kept. */
  *batches(maxBytes: number): Generator<RecordBatch> {
    this.#finishWriting();
    let i = 0;
    while (i < this.#count) {
      const start = this.#startOf(i);
      let j = i + 1;
      while (j < this.#count && this.#ends[j]! - start <= maxBytes) j++;
      yield new SpooledBatch(this.#read(start, this.#ends[j - 1]! + 1), this.#ends.subarray(i, j), start);
      i = j;
    }
  }

  readonly parsed = false;

  get charged(): number {
    return this.#held;
  }

  /** Records held as text or in a file are read once, at the write: nothing to let go of before. */
  letGo(_keep: number): void {}

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#budget.give(this.#held);
    this.#held = 0;
    if (this.#fd !== null) closeSync(this.#fd);
    this.#blocks = [];
    this.#fd = null;
  }

  #append(bytes: Uint8Array): void {
    let from = 0;
    while (from < bytes.length) {
      const block = this.#writable();
      const n = Math.min(bytes.length - from, BLOCK - this.#fill);
      block.set(bytes.subarray(from, from + n), this.#fill);
      this.#fill += n;
      this.#size += n;
      from += n;
    }
  }

  /** Where record `i`'s text starts: after the comma that ends the one before. */
  #startOf(i: number): number {
    return i === 0 ? 0 : this.#ends[i - 1]! + 1;
  }

  /** The block the next bytes go to: a new one from the budget, or the file's write buffer. */
  #writable(): Buffer {
    const last = this.#blocks.at(-1);
    if (last && this.#fill < BLOCK) return last;
    if (this.#fd !== null) {
      this.#flush();
      return this.#blocks[0]!;
    }
    if (this.#budget.take(BLOCK)) {
      this.#held += BLOCK;
      const block = Buffer.allocUnsafe(BLOCK);
      this.#blocks.push(block);
      this.#fill = 0;
      return block;
    }
    this.#spill();
    return this.#blocks[0]!;
  }

  /** Moves the blocks held to a new temporary file; one block stays, as its write buffer. */
  #spill(): void {
    const path = join(tmpdir(), `apm-sync-${process.pid}-${Math.random().toString(36).slice(2)}.records`);
    this.#fd = openSync(path, "wx+", 0o600);
    unlinkSync(path);
    for (const block of this.#blocks) this.#flushed += writeSync(this.#fd, block, 0, BLOCK, this.#flushed);
    const kept = this.#blocks.length > 0 ? BLOCK : 0;
    this.#budget.give(this.#held - kept);
    this.#held = kept;
    this.#blocks = [this.#blocks[0] ?? Buffer.allocUnsafe(BLOCK)];
    this.#fill = 0;
  }

  #flush(): void {
    if (this.#fd === null || this.#fill === 0) return;
    this.#flushed += writeSync(this.#fd, this.#blocks[0]!, 0, this.#fill, this.#flushed);
    this.#fill = 0;
  }

  #finishWriting(): void {
    if (this.#disposed) throw new Error("the records were disposed of");
    this.#flush();
  }

  /** Bytes [start, end) of the records' text. */
  #read(start: number, end: number): Buffer {
    if (this.#fd !== null) {
      const out = Buffer.allocUnsafe(end - start);
      let got = 0;
      while (got < out.length) {
        const n = readSync(this.#fd, out, got, out.length - got, start + got);
        if (n === 0) throw new Error("the records' temporary file ended early");
        got += n;
      }
      return out;
    }
    const first = Math.floor(start / BLOCK);
    const last = Math.floor((end - 1) / BLOCK);
    if (first === last) return this.#blocks[first]!.subarray(start - first * BLOCK, end - first * BLOCK);
    const out = Buffer.allocUnsafe(end - start);
    for (let b = first, at = 0; b <= last; b++) {
      const from = b === first ? start - b * BLOCK : 0;
      const to = b === last ? end - b * BLOCK : BLOCK;
      this.#blocks[b]!.copy(out, at, from, to);
      at += to - from;
    }
    return out;
  }
}

function mib(bytes: number): string {
  return `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`;
}
