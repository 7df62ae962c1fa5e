// The binary COPY encoder's output (copyBinary.ts): big-endian numbers and length-prefixed UTF-8
// text, written into one growing buffer.
import { DIRTY, isClean } from "./cleanText.ts";

const TWO32 = 4294967296;

/**
 * A growing byte buffer. Numbers go through a DataView and short ASCII text byte by byte: Buffer's
 * writeInt32BE, write and copy check their arguments on every call, and were most of the encoder's
 * time at 30 fields a row.
 */
export class Out {
  buf = Buffer.allocUnsafe(64 * 1024);
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
