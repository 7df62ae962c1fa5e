// The client against servers that resolve the spec's open points differently: which token the
// range and series operations take, which groups path answers, and what the server's clock says.
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import { AuthError } from "../../src/api/errors.ts";
import type { ApiClient } from "../../src/api/types.ts";
import { operation } from "../../src/catalogue/index.ts";
import type { Config } from "../../src/config.ts";
import { ACCOUNT_TOKEN, type Handler, PROJECT_TOKEN, reply, startServer, type TestServer, testApiConfig } from "../support/http-server.ts";

let server: TestServer | undefined;
let client: ApiClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setup(handler: Handler, patch: Partial<Config["api"]> = {}) {
  server = await startServer(handler);
  client = createApiClient(testApiConfig(server.url, patch), { now: Date.now, sleep: async () => {}, random: () => 0 });
  return { server, client };
}

const WINDOW = { stime: 1_700_000_000_000, etime: 1_700_003_600_000 };
const only =
  (token: string): Handler =>
  (req, res) =>
    req.headers["x-service-token"] === token
      ? reply(res, 200, '{"records":[],"total":0}')
      : reply(res, 401, '{"msg":"[F] Invalid token","code":401}');

describe("token negotiation", () => {
  it("sends the project token first on range operations", async () => {
    const { server, client } = await setup(only(PROJECT_TOKEN));
    const r = await client.call(operation("range.exception"), { pcode: 12, params: WINDOW });
    expect(r.token).toBe("project");
    expect(server.requests.map((q) => q.headers["x-service-token"])).toEqual([PROJECT_TOKEN]);
  });

  it("falls back to the account token once per operation and project, then remembers it", async () => {
    const { server, client } = await setup(only(ACCOUNT_TOKEN));
    const op = operation("range.exception");
    // Eight windows at once: one probe is refused, the others wait for its answer.
    const results = await Promise.all(Array.from({ length: 8 }, () => client.call(op, { pcode: 12, params: WINDOW })));
    expect(results.every((r) => r.token === "account")).toBe(true);
    const refused = server.requests.filter((q) => q.headers["x-service-token"] === PROJECT_TOKEN);
    expect(refused).toHaveLength(1);
    expect(server.requests).toHaveLength(9);
    expect(client.stats.refused).toBe(1);
    // Another operation negotiates on its own (the server may differ per operation).
    await client.call(operation("range.sql"), { pcode: 12, params: WINDOW });
    expect(server.requests.filter((q) => q.headers["x-service-token"] === PROJECT_TOKEN)).toHaveLength(2);
  });

  it("is an authentication failure only when every configured token is refused, naming both", async () => {
    const { server, client } = await setup(only("nobody"));
    const op = operation("series.apdex.avg");
    const err = await client.call(op, { pcode: 12, params: WINDOW }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).refused).toEqual(["project", "account"]);
    expect((err as Error).message).toMatch(/refused the project token and the account token/);
    // Known refused: nothing more is sent for this operation and project.
    await expect(client.call(op, { pcode: 12, params: WINDOW })).rejects.toBeInstanceOf(AuthError);
    expect(server.requests).toHaveLength(2);
    for (const t of [PROJECT_TOKEN, ACCOUNT_TOKEN]) expect((err as Error).message).not.toContain(t);
  });

  it("with only the project token configured, a refusal is final (no account token to try)", async () => {
    const { server, client } = await setup(only(ACCOUNT_TOKEN), { accountToken: null });
    await expect(client.call(operation("range.sql"), { pcode: 12, params: WINDOW })).rejects.toBeInstanceOf(AuthError);
    expect(server.requests).toHaveLength(1);
  });

  it("project-only operations never try the account token", async () => {
    const { server, client } = await setup(only(ACCOUNT_TOKEN));
    await expect(client.call(operation("project.spot"), { pcode: 12 })).rejects.toBeInstanceOf(AuthError);
    expect(server.requests.map((q) => q.headers["x-service-token"])).toEqual([PROJECT_TOKEN]);
  });
});

describe("documented alternative paths", () => {
  it("tries the docs' groups path when the spec's answers 404, and remembers it", async () => {
    const { server, client } = await setup((req, res) =>
      req.url === "/open/api/json/groups" ? reply(res, 200, '{"data":[],"total":0}') : reply(res, 404, '{"msg":"not found"}'),
    );
    const op = operation("account.groups");
    await client.call(op, {});
    await client.call(op, {});
    expect(server.requests.map((q) => q.url)).toEqual(["/open/api/v2/json/groups", "/open/api/json/groups", "/open/api/json/groups"]);
  });

  it("a configured override is the only path tried", async () => {
    const { server, client } = await setup((_req, res) => reply(res, 404, "{}"), {
      overrides: { "account.groups": { path: "/x/groups" } },
    });
    await expect(client.call(operation("account.groups"), {})).rejects.toThrow(/404/);
    expect(server.requests.map((q) => q.url)).toEqual(["/x/groups"]);
  });
});

describe("server clock", () => {
  it("measures the offset from the Date header, and from a probe of the base URL when nothing was asked yet", async () => {
    const lag = -3 * 3_600_000;
    const { client } = await setup((_req, res) => reply(res, 404, "", { date: new Date(Date.now() + lag).toUTCString() }));
    expect(client.serverClockOffsetMs()).toBeNull();
    const offset = await client.probeClock();
    expect(offset).not.toBeNull();
    expect(Math.abs(offset! - lag)).toBeLessThan(1_000);
  });

  it("prefers the statistics' millisecond timestamp over the Date header", async () => {
    const lag = -90_000;
    const { client } = await setup((_req, res) =>
      reply(res, 200, JSON.stringify({ stime: 1, etime: 2, timestamp: Date.now() + lag, data: [], total: 0, retrievedTotal: 0 }), {
        date: new Date(Date.now()).toUTCString(),
      }),
    );
    await client.call(operation("stat.transaction"), { pcode: 12, params: WINDOW });
    expect(Math.abs(client.serverClockOffsetMs()! - lag)).toBeLessThan(200);
  });
});
