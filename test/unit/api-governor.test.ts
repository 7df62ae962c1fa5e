import { describe, expect, it } from "vitest";
import { RateGovernor } from "../../src/api/governor.ts";

/** A clock that only moves when the governor sleeps: no timed tests. */
function fakeTime() {
  const t = { now: 0, sleeps: [] as number[] };
  return {
    t,
    now: () => t.now,
    sleep: async (ms: number) => {
      t.sleeps.push(ms);
      t.now += ms;
    },
  };
}

describe("RateGovernor", () => {
  it("spaces requests by 1/rate (token bucket of one)", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 10, requestsPerSecond: 2, ...clock });
    const permits = await Promise.all([1, 2, 3, 4, 5].map(() => g.acquire()));
    expect(permits.map((p) => p.issuedAt)).toEqual([0, 500, 1000, 1500, 2000]);
  });

  it("does not burst after an idle spell", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 10, requestsPerSecond: 4, ...clock });
    (await g.acquire()).release("ok");
    clock.t.now = 10_000;
    const a = await g.acquire();
    const b = await g.acquire();
    expect([a.issuedAt, b.issuedAt]).toEqual([10_000, 10_250]);
  });

  it("bounds concurrency and hands a freed slot to the next waiter", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 2, requestsPerSecond: 1000, ...clock });
    const a = await g.acquire();
    await g.acquire();
    let third = false;
    const pending = g.acquire().then((p) => {
      third = true;
      return p;
    });
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    expect(g.active).toBe(2);
    a.release("ok");
    await pending;
    expect(third).toBe(true);
    expect(g.active).toBe(2);
  });

  it("halves the rate on 429 once per episode, with a floor", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 10, requestsPerSecond: 8, ...clock });
    const early = await Promise.all([g.acquire(), g.acquire(), g.acquire()]);
    early[0]!.release("rate-limited");
    expect(g.rate).toBe(4);
    // Admitted before the decrease: sent at the old rate, must not halve again.
    early[1]!.release("rate-limited");
    expect(g.rate).toBe(4);
    const later = await g.acquire();
    later.release("rate-limited");
    expect(g.rate).toBe(2);
    for (let i = 0; i < 5; i++) (await g.acquire()).release("rate-limited");
    expect(g.rate).toBe(0.5);
    early[2]!.release("ok");
  });

  it("spaces requests at the reduced rate after a 429", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 10, requestsPerSecond: 10, ...clock });
    (await g.acquire()).release("rate-limited"); // t=0, rate 10 -> 5
    const a = await g.acquire();
    const b = await g.acquire();
    // The bucket refills at the current rate: one token per 1/5 s.
    expect(b.issuedAt - a.issuedAt).toBe(200);
  });

  it("recovers additively after a streak of successes, never above the configured rate", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 10, requestsPerSecond: 20, recoverAfter: 3, ...clock });
    (await g.acquire()).release("rate-limited");
    expect(g.rate).toBe(10);
    const okTimes = async (n: number) => {
      for (let i = 0; i < n; i++) (await g.acquire()).release("ok");
    };
    await okTimes(2);
    expect(g.rate).toBe(10);
    await okTimes(1);
    expect(g.rate).toBe(12); // step = configured / 10
    // A failure that is not a 429 neither decreases nor breaks the streak logic.
    (await g.acquire()).release("failed");
    await okTimes(3 * 10);
    expect(g.rate).toBe(20);
  });

  it("never sets the floor above a configured rate below 0.5 rps", async () => {
    const clock = fakeTime();
    const g = new RateGovernor({ concurrency: 1, requestsPerSecond: 0.2, ...clock });
    (await g.acquire()).release("rate-limited");
    expect(g.rate).toBe(0.2);
  });
});
