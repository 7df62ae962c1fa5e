// What a hostile or broken server sends, against the real client over a socket (the sandbox's
// hostile modes): every answer ends within a stated time, as an error that says what happened,
// and the attempts the client counts are the requests the server saw.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import { EmptyAnswerError, EncodedBodyError, GaveUpWaitingError, HttpStatusError, TransportError } from "../../src/api/errors.ts";
import type { ApiClient, CallRequest } from "../../src/api/types.ts";
import { operation } from "../../src/catalogue/index.ts";
import { type HostileMode, REDIRECT_ORIGIN, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { Secret } from "../../src/util/secret.ts";
import { recordingSleep, startServer, testApiConfig } from "../support/http-server.ts";
import { bodyOf } from "../support/pages.ts";

const NOW = Date.UTC(2025, 0, 15, 12, 0);
const WINDOW = { stime: Date.UTC(2025, 0, 14, 9, 0), etime: Date.UTC(2025, 0, 14, 10, 0) };

let sb: Sandbox;
let client: ApiClient;
let delays: number[];
let pcode = 0;

beforeAll(async () => {
  sb = await startSandbox({ seed: 5, projects: 1, now: () => NOW, burstKeys: 0 });
  pcode = sb.projects[0]!.pcode;
});
afterAll(() => sb.stop());
afterEach(() => client?.close());

function connect(timeoutMs = 2_000, retries = 2): void {
  const rec = recordingSleep();
  delays = rec.delays;
  const api = testApiConfig(sb.url, {
    timeoutMs,
    retries,
    accountToken: new Secret(sb.accountToken),
    projects: [{ pcode, token: new Secret(sb.projects[0]!.token) }],
  });
  // Our clock is the sandbox's: the probe measures the offset between them.
  client = createApiClient(api, { sleep: rec.sleep, random: () => 0, now: () => NOW });
}

/** One call with the modes on; the error (or body), the attempts counted, the requests logged. */
async function hostileCall(modes: HostileMode[], opId = "stat.sql", req: Partial<CallRequest> = {}, extra = {}) {
  sb.clearLog();
  sb.setHostile({ modes, retryAfterS: 120, trickleMs: 50, ...extra });
  let attempts = 0;
  const t0 = performance.now();
  const out = await client
    .call(operation(opId), { pcode, params: WINDOW, onAttempt: () => void attempts++, ...req })
    .then((r) => bodyOf(operation(opId), r.body))
    .catch((e: unknown) => e);
  sb.setHostile(null);
  return { out, attempts, logged: sb.requestLog.length, ms: performance.now() - t0 };
}

describe("a 200 that is not an answer, where the operation answers an object", () => {
  it.each([
    ["empty-body", "an empty body"],
    ["null-body", "null"],
    ["array-body", "[]"],
    ["string-body", '"ok"'],
  ] as const)("%s: EmptyAnswerError, retried; every attempt counted and logged", async (mode, what) => {
    connect();
    const r = await hostileCall([mode]);
    expect(r.out).toBeInstanceOf(EmptyAnswerError);
    expect((r.out as Error).message).toContain(`the server answered 200 with ${what} where a JSON object was expected`);
    expect({ attempts: r.attempts, logged: r.logged }).toEqual({ attempts: 3, logged: 3 });
  });

  it("event history keeps its documented empty answer", async () => {
    connect();
    const r = await hostileCall(["empty-body"], "project.event_history");
    expect(r.out).toEqual([]);
    expect(r.attempts).toBe(1);
  });
});

describe("misbehaving exchanges", () => {
  it("a compressed bomb is refused unread, its bytes never in the message", async () => {
    // A generous timeout: the sandbox makes the bomb first, which takes seconds on a loaded machine.
    connect(15_000, 0);
    for (const mode of ["gzip-bomb", "deflate-bomb"] as const) {
      const r = await hostileCall([mode]);
      expect(r.out).toBeInstanceOf(EncodedBodyError);
      expect((r.out as Error).message).toMatch(/^the server sent a (gzip|deflate)-encoded body, which was not asked for; not decoded/);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is that there are none
      expect((r.out as Error).message).not.toMatch(/[\u0000-\u0008\ufffd]/);
    }
  }, 30_000);

  it("a redirect is not followed, and the error names where it pointed", async () => {
    connect();
    const r = await hostileCall(["redirect"]);
    expect(r.out).toBeInstanceOf(HttpStatusError);
    expect((r.out as Error).message).toContain(`HTTP 307: the server redirects to ${REDIRECT_ORIGIN}/open/api/v2/stat/sql; not followed`);
    expect(r.logged).toBe(1);
  });

  it("a date-form Retry-After is waited as the server meant it (from its Date header)", async () => {
    connect(2_000, 1);
    const r = await hostileCall(["retry-after-date"]);
    expect(r.out).toBeInstanceOf(HttpStatusError);
    expect(delays).toHaveLength(1);
    expect(delays[0]!).toBeGreaterThanOrEqual(119_000);
    expect(delays[0]!).toBeLessThanOrEqual(121_000);
    expect(r.logged).toBe(2);
  });

  it("a Retry-After of a day: no wait, no retry, the message gives the server's time", async () => {
    connect();
    const r = await hostileCall(["retry-after"], "stat.sql", {}, { retryAfterS: 86_400 });
    expect(r.out).toBeInstanceOf(GaveUpWaitingError);
    expect((r.out as Error).message).toMatch(/retry-after of 1 day.*no retry was made; last answer: HTTP 503/);
    expect({ delays, logged: r.logged, attempts: r.attempts }).toEqual({ delays: [], logged: 1, attempts: 1 });
  });

  it("a body that trickles for ever ends at the timeout, on every attempt (400 ms x 2 attempts: under 2 s)", async () => {
    connect(400, 1);
    const r = await hostileCall(["trickle"]);
    expect(r.out).toBeInstanceOf(TransportError);
    expect((r.out as Error).message).toContain("no complete answer within 400 ms");
    expect(r.logged).toBe(2);
    expect(r.ms).toBeGreaterThanOrEqual(780);
    expect(r.ms).toBeLessThan(2_000);
  });

  it("the clock probe: a trickling body is not waited for; a silent server is given up at the timeout, or at once on a stop", async () => {
    connect(500);
    sb.setHostile({ modes: ["trickle"], ops: ["probe"], trickleMs: 50 });
    let t0 = performance.now();
    // The headers came (with the server's Date): the clock is known although the body never ends.
    expect(Math.abs((await client.probeClock()) ?? Number.NaN)).toBeLessThan(2_000);
    expect(performance.now() - t0).toBeLessThan(400);
    sb.setHostile(null);
    const silent = await startServer(() => undefined);
    try {
      const probe = (timeoutMs: number) => createApiClient(testApiConfig(silent.url, { timeoutMs }), { now: Date.now });
      const bounded = probe(500);
      t0 = performance.now();
      expect(await bounded.probeClock()).toBeNull();
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(450);
      expect(ms).toBeLessThan(1_500);
      await bounded.close();
      const stopped = probe(60_000);
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 100);
      t0 = performance.now();
      expect(await stopped.probeClock(stop.signal)).toBeNull();
      expect(performance.now() - t0).toBeLessThan(1_000);
      await stopped.close();
    } finally {
      await silent.close();
    }
  });

  it("a stop ends a Retry-After wait at once: one request, no wait out", async () => {
    const realClient = createApiClient(
      testApiConfig(sb.url, { retries: 3, projects: [{ pcode, token: new Secret(sb.projects[0]!.token) }] }),
      { now: Date.now },
    );
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("SIGTERM")), 200);
    sb.clearLog();
    sb.setHostile({ modes: ["retry-after"], retryAfterS: 120 });
    const t0 = performance.now();
    const e = await realClient.call(operation("stat.sql"), { pcode, params: WINDOW, stopWaits: stop.signal }).catch((x: unknown) => x);
    sb.setHostile(null);
    await realClient.close();
    expect((e as Error).message).toBe("SIGTERM");
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(sb.requestLog).toHaveLength(1);
  });
});
