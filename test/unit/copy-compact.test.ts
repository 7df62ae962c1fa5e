// A COPY writer holds the encoded batches of a window until they reach its size
// (src/db/write/copyRows.ts): a piece it holds keeps no more memory behind it than twice its
// length, though the encoder writes each batch into a buffer of 64 KiB.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/db/write/copyRows.ts";

describe("compact", () => {
  it("copies a small piece out of a large buffer, and keeps a piece that fills most of its own", () => {
    const big = Buffer.allocUnsafe(64 * 1024);
    big.fill(7);
    const small = big.subarray(100, 1600);
    const kept = compact(small);
    expect(kept.equals(small)).toBe(true);
    expect(kept.buffer.byteLength).toBeLessThanOrEqual(2 * 8192);
    const full = big.subarray(0, 40 * 1024);
    expect(compact(full)).toBe(full);
    // Two hundred small pieces from their own 64 KiB buffers: what stays behind them is their own size.
    const held = Array.from({ length: 200 }, () => compact(Buffer.allocUnsafe(64 * 1024).subarray(0, 20_000)));
    expect(held.reduce((n, b) => n + b.buffer.byteLength, 0)).toBeLessThanOrEqual(2 * 200 * 20_000);
  });
});
