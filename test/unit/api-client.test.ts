import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import {
  AuthError,
  ErrorBodyError,
  HttpStatusError,
  NonJsonBodyError,
  ResponseTooLargeError,
  TransportError,
} from "../../src/api/errors.ts";
import type { ApiClient } from "../../src/api/types.ts";
import { operation } from "../../src/catalogue/index.ts";
import type { Config } from "../../src/config.ts";
import {
  ACCOUNT_TOKEN,
  type Handler,
  PROJECT_TOKEN,
  recordingSleep,
  reply,
  startServer,
  type TestServer,
  testApiConfig,
  unusedPort,
} from "../support/http-server.ts";
import { bodyOf } from "../support/pages.ts";

let server: TestServer | undefined;
let client: ApiClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setup(handler: Handler, patch: Partial<Config["api"]> = {}, random = () => 0) {
  server = await startServer(handler);
  const rec = recordingSleep();
  client = createApiClient(testApiConfig(server.url, patch), { now: Date.now, sleep: rec.sleep, random });
  return { server, client, delays: rec.delays };
}

const WINDOW = { stime: 1_700_000_000_000, etime: 1_700_003_600_000 };

describe("ApiClient retries", () => {
  it("waits at least Retry-After on 429 and then succeeds", async () => {
    const { server, client, delays } = await setup((_req, res, i) =>
      i === 0 ? reply(res, 429, "slow down", { "retry-after": "2" }) : reply(res, 200, '{"records":[],"total":0}'),
    );
    const r = await client.call(operation("range.exception"), { pcode: 12, params: WINDOW });
    expect(bodyOf(operation("range.exception"), r.body)).toEqual({ records: [], total: 0 });
    expect(r.attempts).toBe(2);
    // random() = 0 makes the jitter 0: the only reason to wait 2000 ms is the header.
    expect(delays).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
    expect(client.stats).toEqual({ requests: 2, retries: 1, rateLimited: 1, refused: 0 });
  });

  it("retries 503 with jittered exponential backoff", async () => {
    const { server, client, delays } = await setup(
      (_req, res, i) => (i < 2 ? reply(res, 503, "busy") : reply(res, 200, "[]")),
      {},
      () => 0.5,
    );
    const r = await client.call(operation("project.event_history"), { pcode: 12, params: WINDOW });
    expect(r).toMatchObject({ status: 200, attempts: 3 });
    expect(bodyOf(operation("project.event_history"), r.body)).toEqual([]);
    expect(delays).toEqual([125, 250]); // 0.5 * 250, 0.5 * 500
    expect(server.requests).toHaveLength(3);
  });

  it("retries an HTML 502 page, then parses the good answer", async () => {
    const { client } = await setup((_req, res, i) =>
      i === 0
        ? reply(res, 502, "<html><body><h1>502 Bad Gateway</h1></body></html>", { "content-type": "text/html" })
        : reply(res, 200, '{"data":[{"pcode":7}],"total":1}'),
    );
    const r = await client.call(operation("account.projects"), {});
    expect(bodyOf(operation("account.projects"), r.body)).toEqual({ data: [{ pcode: 7 }], total: 1 });
    expect(r.attempts).toBe(2);
  });

  it("retries a truncated JSON body on a 200", async () => {
    const { server, client } = await setup((_req, res, i) => reply(res, 200, i === 0 ? '{"data":[{"pc' : '{"data":[]}'));
    const r = await client.call(operation("account.projects"), {});
    expect(r).toMatchObject({ attempts: 2 });
    expect(bodyOf(operation("account.projects"), r.body)).toMatchObject({ data: [] });
    expect(server.requests).toHaveLength(2);
  });

  it("gives up with NonJsonBodyError when every answer is HTML", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, "<html>maintenance</html>", { "content-type": "text/html" }), {
      retries: 1,
    });
    const e = await client.call(operation("account.projects"), {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(NonJsonBodyError);
    expect((e as NonJsonBodyError).attempt).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry 401: one request, AuthError naming the project and operation", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 401, '{"msg":"unauthorized"}'));
    const e = await client.call(operation("scalar.tps"), { pcode: 12 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthError);
    expect((e as Error).message).toMatch(/project 12/);
    expect((e as Error).message).toMatch(/scalar\.tps/);
    expect((e as Error).message).toMatch(/token/);
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry other 4xx", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 400, '{"msg":"etime exceeds the limit","code":400}'));
    const e = await client.call(operation("range.sql"), { pcode: 12, params: WINDOW }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HttpStatusError);
    expect(e).not.toBeInstanceOf(AuthError);
    expect((e as HttpStatusError).status).toBe(400);
    expect((e as HttpStatusError).bodySnippet).toContain("etime exceeds");
    expect(server.requests).toHaveLength(1);
  });

  it("times out a stalled server and fails with TransportError after the retries", async () => {
    const { server, client } = await setup(() => undefined /* never answers */, { timeoutMs: 200, retries: 1 });
    const t0 = performance.now();
    const e = await client.call(operation("scalar.tps"), { pcode: 12 }).catch((x: unknown) => x);
    const elapsed = performance.now() - t0;
    expect(e).toBeInstanceOf(TransportError);
    expect((e as Error).message).toMatch(/200 ms/);
    expect(server.requests).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(2000);
  });

  it("stops at once when the caller aborts, without retrying", async () => {
    const { server, client, delays } = await setup(() => undefined, { timeoutMs: 5_000, retries: 3 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await client.call(operation("scalar.tps"), { pcode: 12, signal: ac.signal }).catch((x: unknown) => x);
    expect((e as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("reports a refused connection as TransportError", async () => {
    const port = await unusedPort();
    const c = createApiClient(testApiConfig(`http://127.0.0.1:${port}`, { retries: 2 }), { now: Date.now, ...recordingSleep() });
    const e = await c.call(operation("account.projects"), {}).catch((x: unknown) => x);
    await c.close();
    expect(e).toBeInstanceOf(TransportError);
    expect((e as TransportError).code).toBe("ECONNREFUSED");
    expect(c.stats).toMatchObject({ requests: 3, retries: 2 });
  });
});

describe("ApiClient bodies", () => {
  it("treats a 200 token-error body as AuthError, not data, without retrying", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, '{"msg":"[F] Invalid token","code":400}'));
    const e = await client.call(operation("account.projects"), {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthError);
    expect((e as Error).message).toContain("Invalid token");
    expect((e as Error).message).toContain("the account");
    expect(server.requests).toHaveLength(1);
  });

  it("treats a 200 {error} body as ErrorBodyError", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, '{"error":"internal query failure"}'));
    const e = await client.call(operation("project.spot"), { pcode: 12 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ErrorBodyError);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a 200 whose error body carries a transient code (500), then returns the data", async () => {
    const { server, client } = await setup((_req, res, i) =>
      reply(res, 200, i === 0 ? '{"msg":"temporarily unavailable","code":500}' : '{"pcode":12,"tps":"1.5"}'),
    );
    const res = await client.call(operation("project.spot"), { pcode: 12 });
    expect(bodyOf(operation("project.spot"), res.body)).toEqual({ pcode: 12, tps: "1.5" });
    expect(res.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it("returns [] for event history's {code:204} and for an empty body", async () => {
    const { client } = await setup((_req, res, i) => reply(res, 200, i === 0 ? '{"code":204,"result":"no content"}' : ""));
    const op = operation("project.event_history");
    expect(bodyOf(op, (await client.call(op, { pcode: 12, params: WINDOW })).body)).toEqual([]);
    expect(bodyOf(op, (await client.call(op, { pcode: 12, params: WINDOW })).body)).toEqual([]);
  });

  it("returns text/plain scalars as trimmed text", async () => {
    const bodies = ["5", "93.07\n", '"66.0"'];
    const { client } = await setup((_req, res, i) => reply(res, 200, bodies[i]!, { "content-type": "text/plain" }));
    const got: unknown[] = [];
    for (const id of ["scalar.act_agent", "scalar.tps", "scalar.cpu"])
      got.push((await client.call(operation(id), { pcode: 12 })).body.envelope);
    expect(got).toEqual(["5", "93.07", '"66.0"']);
  });

  it("keeps integers beyond 2^53 exact", async () => {
    const { client } = await setup((_req, res) => reply(res, 200, '{"records":[{"snapSeq":9007199254740993123}],"total":1}'));
    const r = await client.call(operation("range.exception"), { pcode: 12, params: WINDOW });
    expect(bodyOf(operation("range.exception"), r.body)).toEqual({ records: [{ snapSeq: 9007199254740993123n }], total: 1 });
  });

  it("aborts a body above maxResponseBytes, with or without content-length, and does not retry", async () => {
    const big = JSON.stringify({ data: "x".repeat(5000) });
    const { server, client } = await setup(
      (_req, res, i) => {
        if (i === 0) {
          // content-length announced: refused before reading
          res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(big)) });
          res.end(big);
        } else {
          res.writeHead(200, { "content-type": "application/json" });
          // chunked: no content-length, the limit is hit while streaming
          res.write(big.slice(0, 3000));
          setTimeout(() => res.end(big.slice(3000)), 20);
        }
      },
      { maxResponseBytes: 1024 },
    );
    await expect(client.call(operation("account.projects"), {})).rejects.toBeInstanceOf(ResponseTooLargeError);
    await expect(client.call(operation("account.projects"), {})).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect(server.requests).toHaveLength(2);
  });

  it("frees the connection after an error body (concurrency 1: a leaked socket would stall the next call)", async () => {
    const { client } = await setup(
      (req, res) => (req.url.includes("projects") ? reply(res, 500, "e".repeat(200_000)) : reply(res, 200, "3")),
      {
        concurrency: 1,
        retries: 0,
        timeoutMs: 1000,
      },
    );
    await expect(client.call(operation("account.projects"), {})).rejects.toBeInstanceOf(HttpStatusError);
    expect((await client.call(operation("scalar.tps"), { pcode: 12 })).body.envelope).toBe("3");
  });
});

describe("ApiClient requests", () => {
  it("sends base64 caller_url filter values and plain caller_pcode values", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, "{}"));
    const url = "/order/submit?item=>>1";
    await client.call(operation("calls.tx_caller"), { pcode: 12, params: { ...WINDOW, filterkey: "caller_url", filterval: url } });
    await client.call(operation("calls.tx_caller"), { pcode: 12, params: { ...WINDOW, filterkey: "caller_pcode", filterval: 42 } });
    const [a, b] = server.requests.map((r) => r.url.split("/"));
    expect(decodeURIComponent(a!.at(-1)!)).toBe(Buffer.from(url).toString("base64"));
    expect(Buffer.from(decodeURIComponent(a!.at(-1)!), "base64").toString()).toBe(url);
    expect(b!.slice(-2)).toEqual(["caller_pcode", "42"]);
  });

  it("sends oids as a comma list", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, '{"objects":[]}'));
    const r = await client.call(operation("series.thread_count.oids"), {
      pcode: 12,
      params: { ...WINDOW, oids: [-1050048219, 1459620666] },
    });
    expect(server.requests[0]!.url).toBe(`/open/api/json/thread_count/${WINDOW.stime}/${WINDOW.etime}/-1050048219,1459620666`);
    expect(r.url).toBe(server.requests[0]!.url);
  });

  it("uses the configured header names and the right token per operation", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, "1"), {
      tokenHeader: "x-whatap-token",
      pcodeHeader: "x-whatap-pcode",
    });
    await client.call(operation("scalar.tps"), { pcode: 12 });
    const h = server.requests[0]!.headers;
    expect(h["x-whatap-token"]).toBe(PROJECT_TOKEN);
    expect(h["x-whatap-pcode"]).toBe("12");
    expect(h["x-service-token"]).toBeUndefined();
  });

  it("sends the account token without pcode on account operations", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, '{"data":[]}'));
    await client.call(operation("account.projects"), { pcode: 12 });
    expect(server.requests[0]!.headers["x-service-token"]).toBe(ACCOUNT_TOKEN);
    expect(server.requests[0]!.headers["x-service-pcode"]).toBeUndefined();
  });

  it("falls back to the project token on range operations when no account token is configured", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, '{"records":[]}'), { accountToken: null });
    await client.call(operation("range.exception"), { pcode: 12, params: WINDOW });
    expect(server.requests[0]!.headers["x-service-token"]).toBe(PROJECT_TOKEN);
  });

  it("fails with AuthError without sending anything when no token fits", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 200, "{}"), { accountToken: null });
    await expect(client.call(operation("account.projects"), {})).rejects.toBeInstanceOf(AuthError);
    await expect(client.call(operation("scalar.tps"), { pcode: 777 })).rejects.toBeInstanceOf(AuthError);
    expect(server.requests).toHaveLength(0);
  });

  it("posts stat.transaction as JSON by default and honours a method/path override", async () => {
    const { server } = await setup((_req, res) => reply(res, 200, '{"data":[],"total":0,"retrievedTotal":0}'));
    const op = operation("stat.transaction");
    const plain = createApiClient(testApiConfig(server.url), { now: Date.now });
    const overridden = createApiClient(
      testApiConfig(server.url, {
        overrides: { "stat.transaction": { method: "GET", path: "/open/api/v2/json/stat/transaction/{stime}/{etime}" } },
      }),
      { now: Date.now },
    );
    await plain.call(op, { pcode: 12, params: { ...WINDOW, order: "count" } });
    await overridden.call(op, { pcode: 12, params: WINDOW });
    await Promise.all([plain.close(), overridden.close()]);
    const [post, get] = server.requests;
    expect(post).toMatchObject({ method: "POST", url: "/open/api/v2/stat/transaction" });
    expect(post!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(post!.body)).toEqual({ ...WINDOW, order: "count" });
    expect(get).toMatchObject({ method: "GET", url: `/open/api/v2/json/stat/transaction/${WINDOW.stime}/${WINDOW.etime}`, body: "" });
  });
});
