import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import { snippetOf } from "../../src/api/errors.ts";
import { operation } from "../../src/catalogue/index.ts";
import type { Config } from "../../src/config.ts";
import { createLogger, formatPlain } from "../../src/util/logger.ts";
import { redact, Secret } from "../../src/util/secret.ts";
import { ACCOUNT_TOKEN, PROJECT_TOKEN, reply, startServer, type TestServer, testApiConfig, unusedPort } from "../support/http-server.ts";

const OTHER_TOKEN = "proj-T0KEN-13-ffe019";
const TOKENS = [ACCOUNT_TOKEN, PROJECT_TOKEN, OTHER_TOKEN];

// Each path answers one way; some bodies echo the token back, as a careless server might.
const ROUTES: Record<string, (res: import("node:http").ServerResponse, token: string) => void> = {
  "/open/api/json/projects": (res) => reply(res, 401, "{}"),
  "/open/api/tps": (res, token) => reply(res, 500, `<html>stack trace: token=${token}</html>`, { "content-type": "text/html" }),
  "/open/api/cpu": (res, token) => reply(res, 200, `{"msg":"[F] Invalid token ${token}","code":400}`),
  "/open/api/json/spot": (res, token) => reply(res, 200, `{"error":"query failed for ${token}"}`),
  "/open/api/json/project": (res, token) => reply(res, 200, JSON.stringify({ blob: token.repeat(200) })),
  "/open/api/json/event/v2/settings": (res, token) => reply(res, 200, `not json ${token}`),
  "/open/api/json/event/history": (res, token) => reply(res, 400, JSON.stringify({ msg: `bad request from ${token}`, code: 400 })),
};

describe("secrets never leak", () => {
  let server: TestServer;
  const lines: string[] = [];
  const texts: string[] = [];
  const logger = createLogger({ level: "debug", format: "json", destination: { write: (s: string) => void lines.push(s) } });

  beforeAll(async () => {
    server = await startServer((req, res) => {
      const path = req.url.split("?")[0]!;
      if (path === "/open/api/act_agent") return; // stalls: timeout
      const token = String(req.headers["x-service-token"]);
      (ROUTES[path] ?? ((r) => reply(r, 404, "")))(res, token);
    });
    const api: Config["api"] = {
      ...testApiConfig(server.url, { retries: 1, timeoutMs: 200, maxResponseBytes: 2048 }),
      projects: [
        { pcode: 12, token: new Secret(PROJECT_TOKEN) },
        { pcode: 13, token: new Secret(OTHER_TOKEN) },
      ],
    };
    const client = createApiClient(api, { now: Date.now, logger, sleep: async () => undefined });
    const calls: [string, number | undefined][] = [
      ["account.projects", undefined],
      ["scalar.tps", 12],
      ["scalar.cpu", 13],
      ["project.spot", 12],
      ["project.detail", 13],
      ["project.event_settings", 12],
      ["project.event_history", 13],
      ["scalar.act_agent", 12],
    ];
    for (const [id, pcode] of calls) {
      const e = await client
        .call(operation(id), pcode === undefined ? {} : { pcode, params: { stime: 1, etime: 2 } })
        .catch((x: unknown) => x);
      record(e);
    }
    await client.close();

    const refusedPort = await unusedPort();
    const refused = createApiClient(
      { ...api, baseUrl: `http://127.0.0.1:${refusedPort}` },
      { now: Date.now, logger, sleep: async () => undefined },
    );
    record(await refused.call(operation("scalar.tps"), { pcode: 12 }).catch((x: unknown) => x));
    await refused.close();

    // What a careless caller might log.
    logger.info({ api }, "config");
    logger.debug({ headers: { "x-service-token": PROJECT_TOKEN }, token: PROJECT_TOKEN, req: { authorization: OTHER_TOKEN } }, "careless");
  });

  afterAll(async () => {
    await server.close();
  });

  function record(e: unknown): void {
    expect(e).toBeInstanceOf(Error);
    const err = e as Error;
    texts.push(err.message, err.stack ?? "", JSON.stringify(err), inspect(err, { depth: 10 }), String(err));
    logger.error({ err }, "call failed");
  }

  it("exercised every failure kind and the tokens reached the server", () => {
    const names = texts.filter((t) => t.startsWith("{") === false && /^\w+Error/.test(t)).map((t) => t.split(":")[0]);
    expect(new Set(names)).toEqual(
      new Set(["AuthError", "HttpStatusError", "ErrorBodyError", "ResponseTooLargeError", "NonJsonBodyError", "TransportError"]),
    );
    const sent = server.requests.map((r) => r.headers["x-service-token"]);
    expect(sent).toContain(PROJECT_TOKEN);
    expect(sent).toContain(OTHER_TOKEN);
    expect(sent).toContain(ACCOUNT_TOKEN);
    expect(lines.some((l) => l.includes('"msg":"api request failed"'))).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"api request will be retried"'))).toBe(true);
  });

  it("keeps them out of error messages, stacks, JSON and inspect output", () => {
    for (const token of TOKENS) for (const t of texts) expect(t).not.toContain(token);
  });

  it("keeps them out of everything the logger wrote", () => {
    const all = lines.join("");
    expect(all.length).toBeGreaterThan(1000);
    for (const token of TOKENS) expect(all).not.toContain(token);
    expect(all).toContain('"token":"***"');
  });
});

describe("logger", () => {
  it("redacts configured header-name fields", () => {
    const out: string[] = [];
    const log = createLogger({
      level: "info",
      format: "json",
      redactKeys: ["x-custom-token"],
      destination: { write: (s: string) => void out.push(s) },
    });
    log.info({ "x-custom-token": "abc123", nested: { "x-custom-token": "def456", authorization: "Bearer z" }, keep: "visible" }, "m");
    const rec = JSON.parse(out[0]!) as Record<string, unknown>;
    expect(rec["x-custom-token"]).toBe("***");
    expect(rec.nested).toEqual({ "x-custom-token": "***", authorization: "***" });
    expect(rec.keep).toBe("visible");
  });

  it("escapes control characters in every format: a plain line stays one line, JSON stays the same value", () => {
    const hostile = "key\u001b]0;pwned\u0007 \u009b2J\nFAKE INFO ok\u007f";
    for (const format of ["plain", "json"] as const) {
      const out: string[] = [];
      const log = createLogger({ level: "info", format, destination: { write: (s: string) => void out.push(s) } });
      log.warn({ field: hostile, [hostile]: 1 }, `drift: ${hostile}`);
      expect(out).toHaveLength(1);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: none may be written
      expect(out[0]!.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      if (format === "json") expect((JSON.parse(out[0]!) as Record<string, unknown>).field).toBe(hostile);
      else expect(out[0]).toContain("drift: key\\u001b]0;pwned\\u0007 \\u009b2J\\u000aFAKE INFO ok\\u007f");
    }
  });

  it("writes one plain line per record", () => {
    const line = formatPlain(
      JSON.stringify({ level: 40, time: Date.UTC(2024, 4, 1), pid: 1, hostname: "h", msg: "retry", op: "scalar.tps", ms: 12 }),
    );
    expect(line).toBe("2024-05-01T00:00:00.000Z WARN retry op=scalar.tps ms=12\n");
  });
});

describe("redact: every spelling of a token", () => {
  const TOKEN = "Proj-T0ken-12-b81e44zq";
  const secrets = [new Secret(TOKEN), new Secret(OTHER_TOKEN)];
  const json = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  const pct = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
  const everyOther = (f: (c: string) => string) => [...TOKEN].map((c, i) => (i % 2 ? c : f(c))).join("");
  const b64 = (before: string, after: string, url = false) => Buffer.from(before + TOKEN + after).toString(url ? "base64url" : "base64");

  it.each([
    ["as it is", `a ${TOKEN} b`],
    ["upper-cased", `a ${TOKEN.toUpperCase()} b`],
    ["lower-cased, in a query", `?token=${TOKEN.toLowerCase()}&x=1`],
    ["URL-encoded, mixed", `?token=${everyOther(pct)}&x=1`],
    ["JSON-escaped, mixed", `{"msg":"${everyOther(json)}"}`],
    ["JSON-escaped, upper-cased", `{"msg":"${[...TOKEN.toUpperCase()].map(json).join("")}"}`],
    ["HTML entities", `<p>${everyOther((c) => `&#${c.charCodeAt(0)};`)}</p>`],
    ["hex", `id=${Buffer.from(TOKEN).toString("hex")}`],
    ["base64, alignment 0", `x ${b64("abc", "!")} y`],
    ["base64, alignment 1", `x ${b64("abcd", "!!")} y`],
    ["base64url, alignment 2", `x ${b64("ab", "?", true)} y`],
    ["cut short at the end", `token ${TOKEN.slice(0, 6)}`],
    ["cut short in a quoted string", `{"msg":"token ${TOKEN.slice(0, 11)}","code":1}`],
    ["cut short before an ellipsis", `token ${TOKEN.slice(0, 8)}... (cut)`],
    ["URL-encoded, cut short", `?token=${[...TOKEN.slice(0, 7)].map(pct).join("")}`],
    ["all but its last two characters, followed by more text", `{"msg":"token ${TOKEN.slice(0, -2)} is not valid","code":1}`],
    ["its first six characters, glued to more", `a ${TOKEN.slice(0, 6)}xyz b`],
    ["its last characters, after more", `key=abc${TOKEN.slice(3)}&next=1`],
    ["its last six characters, upper-cased", `a ${TOKEN.slice(-6).toUpperCase()} b`],
    ["JSON-escaped, cut short in the middle", `{"msg":"${[...TOKEN.slice(0, 12)].map(json).join("")} and more"}`],
    ["hex, cut short in the middle", `id=${Buffer.from(TOKEN.slice(0, 8)).toString("hex")}00ff rest`],
  ])("%s", (_name, text) => {
    const masked = redact(text, secrets);
    expect(masked).toContain("***");
    // No six characters of the token, nor of the spelling, survive.
    const plain = masked.toLowerCase();
    for (let i = 0; i + 6 <= TOKEN.length; i++) expect(plain).not.toContain(TOKEN.slice(i, i + 6).toLowerCase());
    expect(masked.length).toBeLessThan(text.length);
  });

  it("leaves text alone that only shares a few characters: five of its first or last, or of its middle", () => {
    for (const text of [
      "project 12 failed [scalar.tps (project 12) /open/api/tps]",
      `token ${TOKEN.slice(0, 5)}`,
      `a ${TOKEN.slice(0, 5)}xyz b`,
      `a xyz${TOKEN.slice(-5)}b`,
      `a ${TOKEN.slice(2, -2)} b`,
      `id=${Buffer.from(TOKEN.slice(0, 5)).toString("hex")}`,
      `{"data":[1,2,3],"total":3}`,
    ])
      expect(redact(text, secrets)).toBe(text);
  });

  it("masks a body before cutting it to a snippet: a token across the cut keeps none of its characters", () => {
    for (const at of [290, 295, 299]) {
      const snippet = snippetOf(`${"x".repeat(at)}${TOKEN} rest`, secrets);
      expect(snippet.startsWith(`${"x".repeat(at)}*`)).toBe(true);
      expect(snippet).not.toMatch(/[Pp]/);
    }
  });

  it("finds a spelling wherever it falls in a long text (decoded a part at a time)", () => {
    const pct = [...TOKEN].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("");
    for (const at of [262_114, 262_143, 262_144, 262_147, 524_281]) {
      const masked = redact(`${"x".repeat(at)}${pct}${"y".repeat(100)}`, secrets);
      expect(masked).toBe(`${"x".repeat(at)}***${"y".repeat(100)}`);
    }
  });

  it("finds tokens in a long text (a report) of many projects", () => {
    const tokens = Array.from({ length: 50 }, (_, i) => new Secret(`sbx-p${1000 + i}-abcdefgh${i}xyz`));
    const text = `${"<td>lorem &amp; ipsum 50% \\u0041</td>".repeat(30_000)}${tokens[42]!.reveal().toUpperCase()}<`;
    expect(redact(text, tokens).endsWith("</td>***<")).toBe(true);
  });

  it("masks a short secret's six-character runs and itself, not the words its halves make", () => {
    const short = [new Secret("postgres")];
    expect(redact("password postgres refused", short)).toBe("password *** refused");
    expect(redact("password postgr… refused", short)).toBe("password ***… refused");
    expect(redact("post office, progress", short)).toBe("post office, progress");
  });
});
