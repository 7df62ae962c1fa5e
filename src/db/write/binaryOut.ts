// The binary COPY encoder's output (copyBinary.ts): big-endian numbers and length-prefixed UTF-8
// text, written into one growing buffer. The encoder writes into one such buffer, shared by the
// process (`encoded`), and keeps a copy of what it wrote at its exact size: a buffer of 64 KiB a
// batch made the collector track as much memory outside the heap again, the held batches kept
// up to twice their size behind them, and a window's rows held encoded until its transaction
// would have been charged less than they took (docs/benchmarks.md, twentieth sitting).
import { DIRTY, isClean } from "./cleanText.ts";

const TWO32 = 4294967296;
/** The working buffer's size, and beyond which it is not kept for the next encoding. */
const OUT_BYTES = 64 * 1024;
const KEPT_BYTES = 4 * 1024 * 1024;

/**
 * A growing byte buffer. Numbers go through a DataView and short ASCII text byte by byte: Buffer's
 * writeInt32BE, write and copy check their arguments on every call, and were most of the encoder's
 * time at 30 fields a row.
 */
export class Out {
  buf = Buffer.allocUnsafe(OUT_BYTES);
  view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  pos = 0;
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.length);
  }
  int16(v: number): void {
    this.ensure(2);
    this.view.setInt16(this.pos, v);
    this.pos += 2;
  }
  int32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v);
    this.pos += 4;
  }
  /** A safe integer as a signed 64-bit value. */
  int64(v: number): void {
    this.ensure(8);
    const hi = Math.floor(v / TWO32);
    this.view.setInt32(this.pos, hi);
    this.view.setUint32(this.pos + 4, v - hi * TWO32);
    this.pos += 8;
  }
  float64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
  }
  /** A length-prefixed UTF-8 string (`prefix`: bytes written first, counted in the length). */
  text(s: string, prefix?: number): void {
    const n = s.length;
    this.ensure(5 + n * 3);
    const buf = this.buf;
    const start = this.pos;
    let p = start + 4;
    if (prefix !== undefined) buf[p++] = prefix;
    const from = p;
    // ASCII without NUL is clean and its own UTF-8; anything else is checked and written whole.
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c === 0 || c >= 0x80) break;
      buf[p++] = c;
    }
    if (i < n) {
      if (!isClean(s)) throw DIRTY;
      p = from + buf.write(s, from, "utf8");
    }
    this.view.setInt32(start, p - start - 4);
    this.pos = p;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

let shared: Out | null = null;

/**
 * What `write` writes into the process's working buffer, copied at its size. `write` must not
 * yield (nothing else may encode meanwhile) and may call back into the same Out (a row written
 * again, cleaned). A buffer grown past KEPT_BYTES by a batch is let go of after it.
 */
export function encoded(write: (out: Out) => void): Buffer {
  const out = shared ?? new Out();
  shared = null;
  out.pos = 0;
  try {
    write(out);
    // Not Buffer.from: a small copy would share a pool's 8 KiB with others and keep it all.
    const copy = Buffer.allocUnsafeSlow(out.pos);
    out.buf.copy(copy, 0, 0, out.pos);
    return copy;
  } finally {
    if (out.buf.length <= KEPT_BYTES) shared = out;
  }
}
