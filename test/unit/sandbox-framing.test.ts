// An answer's framing, which HTTP leaves to the server: a Content-Length, or chunked transfer
// encoding in pieces. The sandbox answers either way (profile `framing`), a kept answer too, and the
// API client reads the same records both ways.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import type { ApiClient } from "../../src/api/types.ts";
import { operation } from "../../src/catalogue/index.ts";
import { callSandbox, parseProfile, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { Secret } from "../../src/util/secret.ts";
import { testApiConfig } from "../support/http-server.ts";
import { bodyOf } from "../support/pages.ts";

const NOW = Date.UTC(2025, 0, 15, 12, 0);
const WINDOW = { stime: Date.UTC(2025, 0, 14, 9, 0), etime: Date.UTC(2025, 0, 14, 10, 0) };
const FRAMINGS = ["length", "chunked"] as const;

describe.each(FRAMINGS.flatMap((framing) => [false, true].map((cacheReplies) => ({ framing, cacheReplies }))))(
  "answers framed by $framing (kept answers: $cacheReplies)",
  ({ framing, cacheReplies }) => {
    let sb: Sandbox;
    let client: ApiClient;
    beforeAll(async () => {
      sb = await startSandbox({ seed: 5, projects: 1, now: () => NOW, burstKeys: 0, cacheReplies, profile: { framing } });
    });
    afterEach(() => client?.close());
    afterAll(() => sb.stop());

    it("frames the body as the profile says, its length (when stated) in bytes", async () => {
      const pcode = sb.projects[0]!.pcode;
      for (let k = 0; k < 2; k++) {
        const r = await callSandbox(sb, "stat.sql", { pcode, body: WINDOW });
        expect(r.status).toBe(200);
        expect(r.text.length).toBeGreaterThan(64 * 1024); // several pieces when chunked
        if (framing === "chunked") {
          expect(r.headers.get("content-length")).toBeNull();
          expect(r.headers.get("transfer-encoding")).toBe("chunked");
        } else expect(Number(r.headers.get("content-length"))).toBe(Buffer.byteLength(r.text));
      }
    });

    it("is read by the API client into the sandbox's records", async () => {
      const pcode = sb.projects[0]!.pcode;
      const api = testApiConfig(sb.url, {
        accountToken: new Secret(sb.accountToken),
        projects: [{ pcode, token: new Secret(sb.projects[0]!.token) }],
      });
      client = createApiClient(api, { now: () => NOW });
      const op = operation("stat.sql");
      const r = await client.call(op, { pcode, params: WINDOW });
      const read = bodyOf(op, r.body) as { data: unknown[] };
      const sent = (await callSandbox(sb, "stat.sql", { pcode, body: WINDOW })).json as { data: unknown[] };
      expect(read.data.length).toBeGreaterThan(100);
      expect(JSON.stringify(read.data)).toBe(JSON.stringify(sent.data));
    });
  },
);

// Whether a connection outlives its answer is the server's to choose too (HTTP/1.1 keeps it open
// unless an answer says `Connection: close`). The API client reads the same records either way:
// on one connection reused, or on a new connection per request.
describe.each(["keep-alive", "close"] as const)("connections after an answer: %s", (connection) => {
  let sb: Sandbox;
  let client: ApiClient;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 5, projects: 1, now: () => NOW, burstKeys: 0, profile: { connection } });
  });
  afterAll(async () => {
    await client?.close();
    await sb.stop();
  });

  it("says so in each answer, and the API client reads every page, on a new connection each when closed", async () => {
    const pcode = sb.projects[0]!.pcode;
    const r = await callSandbox(sb, "stat.sql", { pcode, body: WINDOW });
    if (connection === "close") expect(r.headers.get("connection")).toBe("close");
    else expect(r.headers.get("connection")).not.toBe("close");
    const api = testApiConfig(sb.url, {
      accountToken: new Secret(sb.accountToken),
      projects: [{ pcode, token: new Secret(sb.projects[0]!.token) }],
    });
    client = createApiClient(api, { now: () => NOW });
    const op = operation("stat.sql");
    sb.clearLog();
    const hours = [0, 1, 2, 3, 4, 5].map((h) => ({ stime: WINDOW.stime + h * 3_600_000, etime: WINDOW.etime + h * 3_600_000 }));
    for (const params of hours) {
      const read = bodyOf(op, (await client.call(op, { pcode, params })).body) as { data: unknown[] };
      const sent = (await callSandbox(sb, "stat.sql", { pcode, body: params })).json as { data: unknown[] };
      expect(read.data.length).toBeGreaterThan(100);
      expect(JSON.stringify(read.data)).toBe(JSON.stringify(sent.data));
    }
    // The client's requests only (callSandbox's own come on connections of their own).
    const clients = sb.requestLog.filter((e) => e.opId === "stat.sql").map((e) => e.connection);
    const calls = new Set(clients.filter((_, i) => i % 2 === 0));
    expect(clients.length).toBe(2 * hours.length);
    if (connection === "close") expect(calls.size).toBe(hours.length);
    else expect(calls.size).toBe(1);
  });
});

it("refuses a connection mode it does not know, naming the ones it does", () => {
  expect(() => parseProfile({ connection: "sometimes" })).toThrow('--connection: expected one of keep-alive, close, got "sometimes"');
});
