import { describe, expect, it } from "vitest";
import { GaveUpWaitingError, HttpStatusError, RateLimitedError, TransportError } from "../../src/api/errors.ts";
import {
  BACKOFF_MAX_MS,
  backoffDelay,
  formatDuration,
  parseRetryAfter,
  RETRY_AFTER_MAX_MS,
  WINDOW_WAIT_MAX_MS,
  withRetry,
} from "../../src/api/retry.ts";

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

  it("does not wait for an absurd Retry-After, and says the server's time, not 'after retries'", async () => {
    const e = new HttpStatusError(503, "", ctx, { retryAfterMs: 86_400_000 });
    const r = await run([e], 3);
    expect(r.result).toBeInstanceOf(GaveUpWaitingError);
    expect((r.result as Error).message).toMatch(
      /^the server asked to wait \(retry-after of 1 day\), more than the 5 min a request may wait: no retry was made; last answer: HTTP 503/,
    );
    expect((r.result as GaveUpWaitingError).cause).toBe(e);
    expect(r.delays).toEqual([]);
    expect(RETRY_AFTER_MAX_MS).toBe(300_000);
  });

  it("bounds the waits of a window across its calls", async () => {
    const waits = { waitedMs: 0 };
    const delays: number[] = [];
    const busy = () => new RateLimitedError(429, "", ctx, { retryAfterMs: 120_000 });
    const call = () =>
      withRetry(
        async () => {
          throw busy();
        },
        { retries: 5, random: () => 0, sleep: async (ms) => void delays.push(ms), waits },
      ).catch((x: unknown) => x);
    const first = await call();
    // 120 s + 120 s fit in the 5 minutes; the third wait does not.
    expect(delays).toEqual([120_000, 120_000]);
    expect((first as Error).message).toMatch(
      /gave up after waiting 4 min for this window \(at most 5 min per window\); the next wait would have been 2 min/,
    );
    // The next call of the same window has no wait left.
    expect(await call()).toBeInstanceOf(GaveUpWaitingError);
    expect(delays).toHaveLength(2);
    expect(waits.waitedMs).toBeLessThanOrEqual(WINDOW_WAIT_MAX_MS);
  });

  it("a stop ends a wait at once with the stop's reason, and nothing more is attempted", async () => {
    const stop = new AbortController();
    let calls = 0;
    const sleep = (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, ms);
        signal?.addEventListener("abort", () => {
          clearTimeout(t);
          reject(signal.reason);
        });
      });
    setTimeout(() => stop.abort(new Error("SIGTERM")), 50);
    const t0 = performance.now();
    const e = await withRetry(
      async () => {
        calls++;
        throw new HttpStatusError(503, "", ctx, { retryAfterMs: 120_000 });
      },
      { retries: 3, random: () => 0, sleep, stopWaits: stop.signal },
    ).catch((x: unknown) => x);
    expect((e as Error).message).toBe("SIGTERM");
    expect(calls).toBe(1);
    expect(performance.now() - t0).toBeLessThan(1_000);
  });

  it("formats durations the way messages say them", () => {
    expect([86_400_000, 172_800_000, 5_400_000, 300_000, 90_000, 250].map(formatDuration)).toEqual([
      "1 day",
      "2 days",
      "1.5 h",
      "5 min",
      "90 s",
      "250 ms",
    ]);
  });
});
