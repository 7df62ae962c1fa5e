// The circuit breaker (issue 19 item 1): a server that cannot be reached ends the calls at once
// after BREAKER_THRESHOLD failures in a row across requests; a blip among answers is retried as
// before; an answer of any status counts the failures from zero again.
import { afterEach, describe, expect, it } from "vitest";
import { BREAKER_THRESHOLD, breakerThreshold, CircuitBreakers, CircuitOpenError } from "../../src/api/breaker.ts";
import { createApiClient } from "../../src/api/client.ts";
import { HttpStatusError, TlsError, TransportError } from "../../src/api/errors.ts";
import type { ApiClient } from "../../src/api/types.ts";
import { operation } from "../../src/catalogue/index.ts";
import { recordingSleep, reply, startServer, type TestServer, testApiConfig, unusedPort } from "../support/http-server.ts";

let server: TestServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

const refused = () => new TransportError("connection failed: ECONNREFUSED", { opId: "x", path: "/", attempt: 1 }, { code: "ECONNREFUSED" });
const answer = new HttpStatusError(503, "busy", { opId: "x", path: "/", attempt: 1 });

describe("CircuitBreakers", () => {
  it("opens after the threshold of failures to connect in a row, and an answer of any status starts the count again", () => {
    const b = new CircuitBreakers(3);
    b.failed("http://a", refused());
    b.failed("http://a", refused());
    b.failed("http://a", answer); // an answer is not a failure to connect
    b.answered("http://a");
    b.failed("http://a", refused());
    b.failed("http://a", refused());
    expect(b.opened.aborted).toBe(false);
    expect(() => b.check()).not.toThrow();
    b.failed("http://a", refused());
    expect(b.opened.aborted).toBe(true);
    expect(b.opened.reason).toBeInstanceOf(CircuitOpenError);
    expect(() => b.check()).toThrow(/cannot reach http:\/\/a: 3 request\(s\) in a row got no answer.*Check APM_BASE_URL/);
  });

  it("opens at once on a TLS failure (it is not retried), and names the last error's location once", () => {
    const b = new CircuitBreakers(BREAKER_THRESHOLD);
    b.failed("https://a", new TlsError("DEPTH_ZERO_SELF_SIGNED_CERT", { opId: "x", path: "/p", attempt: 1 }));
    expect(b.opened.aborted).toBe(true);
    const message = (b.opened.reason as Error).message;
    expect(message).toMatch(/last: TLS: DEPTH_ZERO_SELF_SIGNED_CERT;/);
    expect(message.split("[x /p]").length - 1).toBe(1);
    // check keeps probing: a breaker that never opens stays closed on TLS too.
    const never = new CircuitBreakers(Number.POSITIVE_INFINITY);
    never.failed("https://a", new TlsError("CERT_HAS_EXPIRED", { opId: "x", path: "/p", attempt: 1 }));
    expect(never.opened.aborted).toBe(false);
  });

  it("opens within one request's attempts: a window never gives up (recorded failed) before the run stops", () => {
    expect([0, 1, 3, 4, 5, 20].map(breakerThreshold)).toEqual([1, 2, 4, 5, 5, 5]);
  });

  it("with retries 1, one call's two refused attempts open it: the engine takes the call's failure as the stop", async () => {
    const port = await unusedPort();
    client = createApiClient(testApiConfig(`http://127.0.0.1:${port}`, { retries: 1, concurrency: 1 }), {
      now: Date.now,
      ...recordingSleep(),
    });
    const e = await client.call(operation("account.projects"), {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect(client.stats.requests).toBe(2);
    expect(client.unreachable.aborted).toBe(true);
  });

  it("counts each origin apart", () => {
    const b = new CircuitBreakers(2);
    b.failed("http://a", refused());
    b.failed("http://b", refused());
    expect(b.opened.aborted).toBe(false);
  });
});

describe("ApiClient against an unreachable server", () => {
  it("stops calling after BREAKER_THRESHOLD refused connections across calls: every call fails with CircuitOpenError", async () => {
    const port = await unusedPort();
    client = createApiClient(testApiConfig(`http://127.0.0.1:${port}`, { retries: 4, concurrency: 4 }), {
      now: Date.now,
      ...recordingSleep(),
    });
    const calls = Array.from({ length: 6 }, () => client!.call(operation("account.projects"), {}).catch((e: unknown) => e));
    const errors = await Promise.all(calls);
    expect(client.unreachable.aborted).toBe(true);
    for (const e of errors) expect(e).toBeInstanceOf(CircuitOpenError);
    // Six calls of five attempts would be 30 requests; in flight when it opened at most one per connection more.
    expect(client.stats.requests).toBeLessThanOrEqual(BREAKER_THRESHOLD + 4);
    const later = await client.call(operation("account.projects"), {}).catch((e: unknown) => e);
    expect(later).toBeInstanceOf(CircuitOpenError);
    expect(client.stats.requests).toBeLessThanOrEqual(BREAKER_THRESHOLD + 4);
    // A worker's next job tries again.
    client.reconnect();
    expect(client.unreachable.aborted).toBe(false);
    expect(await client.call(operation("account.projects"), {}).catch((e: unknown) => e)).toBeInstanceOf(TransportError);
  });

  it("blips of failed connections shorter than the threshold are retried, each answer starting the count again", async () => {
    // Four connections cut, an answer, four cut, an answer: eight failures, never five in a row.
    server = await startServer((_req, res, i) => {
      if (i % BREAKER_THRESHOLD < BREAKER_THRESHOLD - 1) res.socket?.destroy();
      else reply(res, 200, '{"records":[],"total":0}');
    });
    client = createApiClient(testApiConfig(server.url, { retries: 4 }), { now: Date.now, ...recordingSleep() });
    for (const _ of [1, 2]) {
      const r = await client.call(operation("range.exception"), {
        pcode: 12,
        params: { stime: 1_700_000_000_000, etime: 1_700_003_600_000 },
      });
      expect(r.attempts).toBe(BREAKER_THRESHOLD);
    }
    expect(client.unreachable.aborted).toBe(false);
  });

  it("an answer that begins and then stalls is a reachable server: the call fails as before, the run goes on", async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
    });
    client = createApiClient(testApiConfig(server.url, { retries: BREAKER_THRESHOLD, timeoutMs: 100 }), {
      now: Date.now,
      ...recordingSleep(),
    });
    const e = await client.call(operation("account.projects"), {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect(client.stats.requests).toBe(BREAKER_THRESHOLD + 1);
    expect(client.unreachable.aborted).toBe(false);
  });

  it("a wait between attempts ends when the server is found unreachable", async () => {
    const port = await unusedPort();
    let waits = 0;
    // The first call's backoff waits until aborted; the other calls fail meanwhile and open the breaker.
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        waits++;
        if (waits > 1) return resolve();
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    client = createApiClient(testApiConfig(`http://127.0.0.1:${port}`, { retries: 4, concurrency: 1 }), {
      now: Date.now,
      sleep,
      random: () => 0,
    });
    const waiting = client.call(operation("account.projects"), {}).catch((e: unknown) => e);
    const others = Array.from({ length: 3 }, () => client!.call(operation("account.projects"), {}).catch((e: unknown) => e));
    expect(await waiting).toBeInstanceOf(CircuitOpenError);
    for (const e of await Promise.all(others)) expect(e).toBeInstanceOf(CircuitOpenError);
  });
});
