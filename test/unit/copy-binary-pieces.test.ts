// The binary COPY encoder writes into one working buffer shared by the process and keeps a copy of
// each batch at its size (src/db/write/binaryOut.ts `encoded`): a piece held until its COPY, or
// until a window's transaction, takes its own bytes and nothing behind them, and a row written
// again (its text cleaned) in the middle of a batch does not disturb the batch around it.
import { describe, expect, it } from "vitest";
import { encoded } from "../../src/db/write/binaryOut.ts";
import { binaryEncoder } from "../../src/db/write/copyBinary.ts";
import { plainTableInfo } from "../support/table-info.ts";

const info = plainTableInfo("t", [
  ["pcode", "bigint"],
  ["n", "bigint"],
  ["s", "text"],
]);

describe("binary COPY pieces", () => {
  it("are each their own buffer at their size, however small", () => {
    const encode = binaryEncoder(info, ["n", "s"], { constants: { pcode: 7 }, tally: { replaced: 0 } });
    const pieces = Array.from({ length: 200 }, (_, i) => encode([{ n: i, s: `row ${i}` }]));
    for (const piece of pieces) {
      expect(piece.buffer.byteLength).toBe(piece.length);
      expect(piece.byteOffset).toBe(0);
    }
    // Each piece still holds its own row after the buffer was written again 199 times.
    expect(pieces[3]!.includes("row 3")).toBe(true);
    expect(pieces[3]!.includes("row 4")).toBe(false);
  });

  it("encodes a row written again, cleaned, in the middle of a batch as its neighbours", () => {
    const tally = { replaced: 0 };
    const encode = binaryEncoder(info, ["n", "s"], { constants: { pcode: 7 }, tally });
    const clean = encode([
      { n: 1, s: "a" },
      { n: 2, s: "b_c" },
      { n: 3, s: "z" },
    ]);
    const dirty = encode([
      { n: 1, s: "a" },
      { n: 2, s: "b\u0000c" },
      { n: 3, s: "z" },
    ]);
    expect(tally.replaced).toBe(1);
    // The NUL is replaced by one character (U+FFFD, 3 bytes in UTF-8), the rest unchanged.
    expect(dirty.length).toBe(clean.length + 2);
    expect(dirty.subarray(dirty.length - 20).equals(clean.subarray(clean.length - 20))).toBe(true);
  });

  it("gives a batch encoded inside another's a buffer of its own", () => {
    const outer = encoded((out) => {
      out.int32(1);
      const inner = encoded((o) => o.int32(2));
      expect([...inner]).toEqual([0, 0, 0, 2]);
      out.int32(3);
    });
    expect([...outer]).toEqual([0, 0, 0, 1, 0, 0, 0, 3]);
  });
});
