// A JSON answer split as its bytes arrive: the elements of its records array (the catalogue's
// `records.at`: a top-level key, or the body itself when it is a bare array) go to one sink as
// they complete, everything else (the envelope, with that array left empty) to another. Nothing
// is parsed here: each record's text is parsed on its own when it is written (parse-response.ts),
// so a page of any size is never one tree in memory. Only the structure is checked here (brackets,
// strings, the separators between records); a record that is not valid JSON by itself is refused
// by its own parse and quarantined, the rest of the page kept.

/** Where the split bytes go. Slices are views of the pushed chunk: copy what is kept. */
export interface SplitSink {
  envelope(bytes: Uint8Array): void;
  record(bytes: Uint8Array): void;
  endRecord(): void;
}

/** The body is not one JSON value, or its records array is malformed: the whole answer is refused. */
export class SplitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SplitError";
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const BOM = [0xef, 0xbb, 0xbf];

/** The bytes that matter between the strings of a record: what each one does. */
const STARTS_STRING = 1;
const OPENS = 2;
const CLOSES = 3;
const STRUCTURAL = new Uint8Array(256);
STRUCTURAL[QUOTE] = STARTS_STRING;
STRUCTURAL[OPEN_OBJECT] = OPENS;
STRUCTURAL[OPEN_ARRAY] = OPENS;
STRUCTURAL[CLOSE_OBJECT] = CLOSES;
STRUCTURAL[CLOSE_ARRAY] = CLOSES;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

type Region = "envelope" | "record" | "skip";

/** Where the splitter stands inside the records array. */
interface InArray {
  /** Depth of the array's elements. */
  readonly depth: number;
  /** An element has started and its separator has not come yet. */
  element: boolean;
  /** The current element is a container that has closed: only a separator may follow. */
  closed: boolean;
  /** The last separator was a comma (a `]` after it is a trailing comma). */
  comma: boolean;
}

/**
 * Splits one JSON body. `at`: the top-level key holding the records array, null for a body that
 * is the array itself, undefined for an operation without records (everything is envelope).
 */
export class RecordSplitter {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #started = false;
  /** The root value is complete: only spaces may follow. */
  #rootDone = false;
  #rootObject = false;
  /** Inside the records array; "done" once it closed (a second one is refused). */
  #array: InArray | null | "done" = null;
  /** At depth 1 of a root object: a key is due, or the value of key #key is due. */
  #expectKey = false;
  #expectValue = false;
  #key: string | null = null;
  #keyBytes: number[] | null = null;
  #region: Region = "envelope";
  #bomSeen = 0;
  #records = 0;

  constructor(
    private readonly at: string | null | undefined,
    private readonly sink: SplitSink,
  ) {}

  /** Records completed so far. */
  get records(): number {
    return this.#records;
  }

  /** Whether no byte of a value arrived (an empty or blank body). */
  get empty(): boolean {
    return !this.#started;
  }

  push(chunk: Uint8Array): void {
    let from = this.#skipBom(chunk);
    for (let i = from; i < chunk.length; i++) {
      const a = this.#array;
      if (this.#region === "record" && a !== null && a !== "done" && this.#depth > a.depth) {
        i = this.#inside(chunk, i, a.depth);
        if (i === chunk.length) break;
      }
      const c = chunk[i]!;
      if (this.#inString) {
        this.#stringByte(c);
        continue;
      }
      if (isSpace(c)) continue;
      const next = this.#regionOf(c);
      if (next !== this.#region) {
        this.#emit(chunk, from, i);
        if (this.#region === "record") this.#endRecord();
        this.#region = next;
        from = i;
      }
      this.#structural(c);
    }
    this.#emit(chunk, from, chunk.length);
  }

  /** The body ended: throws SplitError unless it held one whole JSON value. */
  end(): void {
    if (this.#inString || this.#depth > 0) throw new SplitError("the body ends inside a value (cut short?)");
    if (this.#region === "record") this.#endRecord();
    this.#region = "envelope";
  }

  /**
   * The bytes inside a container record, from `i`: only strings and brackets matter there, so they
   * are scanned in tight loops (the per-byte bookkeeping of push cost about 6 ns a byte, most of
   * a 10,000-record page's CPU before parsing): a string's bytes in a loop of their own, which
   * looks for its closing quote or a backslash only, the bytes between strings through a table of
   * the structural ones. Stops at the bracket that closes the record (left to push: `floor` is the
   * records array's depth) or at the chunk's end; returns where it stopped.
   */
  #inside(chunk: Uint8Array, i: number, floor: number): number {
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    const n = chunk.length;
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false;
          i++;
        }
        while (i < n) {
          const c = chunk[i++]!;
          if (c === QUOTE) {
            inString = false;
            break;
          }
          if (c !== BACKSLASH) continue;
          // The byte after a backslash is skipped, whatever it is; at the chunk's end it is the next chunk's first.
          if (i === n) escaped = true;
          else i++;
        }
        continue;
      }
      const kind = STRUCTURAL[chunk[i]!]!;
      if (kind === OPENS) depth++;
      else if (kind === CLOSES) {
        if (depth === floor + 1) break;
        depth--;
      } else if (kind === STARTS_STRING) inString = true;
      i++;
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    return i;
  }

  #skipBom(chunk: Uint8Array): number {
    // A UTF-8 byte order mark before the value (String.trim took it off the text reader's body).
    let i = 0;
    while (!this.#started && this.#bomSeen < 3 && i < chunk.length && chunk[i] === BOM[this.#bomSeen]) {
      this.#bomSeen++;
      i++;
    }
    return i;
  }

  #stringByte(c: number): void {
    if (this.#escaped) this.#escaped = false;
    else if (c === BACKSLASH) this.#escaped = true;
    else if (c === QUOTE) {
      this.#inString = false;
      this.#stringClosed();
      return;
    }
    this.#keyBytes?.push(c);
  }

  /** The region the byte `c` (outside a string, not a space) belongs to; refuses a malformed array. */
  #regionOf(c: number): Region {
    if (this.#rootDone) throw new SplitError("more than one value in the body");
    const a = this.#array;
    if (a === null || a === "done" || this.#depth !== a.depth) return this.#region;
    if (c === CLOSE_ARRAY) {
      if (!a.element && a.comma) throw new SplitError("a comma before the end of the records");
      return "envelope";
    }
    if (c === COMMA) {
      if (!a.element) throw new SplitError("a comma without a record before it");
      return "skip";
    }
    if (a.closed) throw new SplitError("two records without a comma between them");
    return "record";
  }

  /** Tracks depth, keys and the records array for the structural byte `c`. */
  #structural(c: number): void {
    this.#started = true;
    const a = this.#array;
    if (a !== null && a !== "done" && this.#depth === a.depth) {
      if (c === COMMA) {
        a.element = false;
        a.closed = false;
        a.comma = true;
        return;
      }
      if (c === CLOSE_ARRAY) {
        this.#array = "done";
        this.#close();
        return;
      }
      if (!a.element) {
        a.element = true;
        a.closed = false;
        a.comma = false;
      }
    }
    if (c === QUOTE) this.#openString();
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) this.#open(c);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) this.#close();
    else if (this.#depth === 1 && this.#rootObject) {
      this.#expectKey = c === COMMA;
      this.#expectValue = c === COLON;
    }
  }

  #openString(): void {
    this.#inString = true;
    if (this.#depth === 1 && this.#rootObject && this.#expectKey) this.#keyBytes = [];
    this.#expectValue = false;
  }

  #stringClosed(): void {
    if (this.#keyBytes) {
      const text = `"${Buffer.from(this.#keyBytes).toString("utf8")}"`;
      this.#keyBytes = null;
      this.#expectKey = false;
      try {
        this.#key = JSON.parse(text) as string;
      } catch {
        throw new SplitError(`a key that is not a JSON string: ${text.slice(0, 40)}`);
      }
    }
    if (this.#depth === 0) this.#rootDone = true;
  }

  #open(c: number): void {
    if (this.#depth === 0) {
      this.#rootObject = c === OPEN_OBJECT;
      this.#expectKey = this.#rootObject;
      if (this.at === null && c === OPEN_ARRAY) this.#array = { depth: 1, element: false, closed: false, comma: false };
    } else if (this.#depth === 1 && this.#rootObject && this.#expectValue) {
      this.#expectValue = false;
      if (c === OPEN_ARRAY && typeof this.at === "string" && this.#key === this.at) {
        if (this.#array === "done") throw new SplitError(`the key ${JSON.stringify(this.at)} appears twice`);
        this.#array = { depth: 2, element: false, closed: false, comma: false };
      }
    }
    this.#depth++;
  }

  #close(): void {
    if (this.#depth === 0) throw new SplitError("a closing bracket without its opening one");
    this.#depth--;
    if (this.#depth === 0) this.#rootDone = true;
    const a = this.#array;
    // A container record ends with its own closing bracket; its separator is still due.
    if (a !== null && a !== "done" && a.element && this.#depth === a.depth) a.closed = true;
  }

  #emit(chunk: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    if (this.#region === "envelope") this.sink.envelope(chunk.subarray(from, to));
    else if (this.#region === "record") this.sink.record(chunk.subarray(from, to));
  }

  #endRecord(): void {
    this.#records++;
    this.sink.endRecord();
  }
}
