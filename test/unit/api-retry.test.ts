import { describe, expect, it } from "vitest";
import { HttpStatusError, RateLimitedError, TransportError } from "../../src/api/errors.ts";
import { BACKOFF_MAX_MS, backoffDelay, parseRetryAfter, RETRY_AFTER_MAX_MS, withRetry } from "../../src/api/retry.ts";

const ctx = { opId: "scalar.tps", pcode: 1, path: "/open/api/tps", attempt: 1 };

describe("backoffDelay", () => {
  it("is full jitter under an exponential ceiling capped at 30 s", () => {
    const top = () => 0.999999;
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, top))).toEqual([249, 499, 999, 1999]);
    expect(backoffDelay(20, top)).toBe(BACKOFF_MAX_MS - 1);
    expect(backoffDelay(5, () => 0)).toBe(0);
  });

  it("never waits less than Retry-After", () => {
    expect(backoffDelay(0, () => 0.5, 2000)).toBe(2000);
    expect(backoffDelay(10, () => 0.5, 2000)).toBe(15_000);
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("3", 0)).toBe(3000);
    expect(parseRetryAfter(["1.5"], 0)).toBe(1500);
    const now = Date.parse("2024-05-01T10:00:00Z");
    expect(parseRetryAfter("Wed, 01 May 2024 10:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 01 May 2024 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("withRetry", () => {
  const run = async (errors: Error[], retries: number) => {
    const delays: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        const e = errors[calls++];
        if (e) throw e;
        return "done";
      },
      { retries, random: () => 0.5, sleep: async (ms) => void delays.push(ms) },
    ).catch((e: unknown) => e);
    return { result, calls, delays };
  };

  it("retries retryable errors with growing delays", async () => {
    const r = await run([new TransportError("reset", ctx), new HttpStatusError(503, "", ctx)], 3);
    expect(r).toEqual({ result: "done", calls: 3, delays: [125, 250] });
  });

  it("stops at once on non-retryable errors", async () => {
    const notFound = new HttpStatusError(404, "", ctx);
    const r = await run([notFound], 3);
    expect(r.result).toBe(notFound);
    expect(r.calls).toBe(1);
  });

  it("gives up after the configured retries, with the last error", async () => {
    const last = new HttpStatusError(500, "third", ctx);
    const r = await run([new HttpStatusError(500, "a", ctx), new HttpStatusError(500, "b", ctx), last], 2);
    expect(r.result).toBe(last);
    expect(r.calls).toBe(3);
    expect(r.delays).toHaveLength(2);
  });

  it("does not wait for an absurd Retry-After", async () => {
    const e = new RateLimitedError(429, "", ctx, { retryAfterMs: RETRY_AFTER_MAX_MS + 1 });
    const r = await run([e], 3);
    expect(r.result).toBe(e);
    expect(r.delays).toEqual([]);
  });
});
