import { describe, expect, it } from "vitest";
import { authHeaders, tokenCandidates } from "../../src/api/auth.ts";
import { AuthError } from "../../src/api/errors.ts";
import { buildRequest, RequestBuildError } from "../../src/api/request.ts";
import { operation } from "../../src/catalogue/index.ts";
import { ACCOUNT_TOKEN, PROJECT_TOKEN, testApiConfig } from "../support/http-server.ts";

const api = testApiConfig("https://api.example.com");

describe("buildRequest", () => {
  it("fills path placeholders and keeps GET bodiless", () => {
    const r = buildRequest(operation("range.exception"), { stime: 1_700_000_000_000, etime: 1_700_003_600_000 }, api);
    expect(r).toMatchObject({
      origin: "https://api.example.com",
      method: "GET",
      path: "/open/api/json/exception/1700000000000/1700003600000",
    });
    expect(r.body).toBeUndefined();
    expect(r.headers["content-type"]).toBeUndefined();
  });

  it("joins oid arrays with literal commas", () => {
    const r = buildRequest(operation("series.thread_count.oids"), { stime: 1, etime: 2, oids: [-1050048219, 1459620666] }, api);
    expect(r.path).toBe("/open/api/json/thread_count/1/2/-1050048219,1459620666");
  });

  it("base64-encodes caller_url filter values before percent-encoding, not caller_pcode ones", () => {
    const url = "/pay/confirm?id=>>>";
    const b64 = Buffer.from(url, "utf8").toString("base64");
    expect(b64).toMatch(/[+/=]/); // makes the percent-encoding step observable
    const r = buildRequest(operation("calls.tx_caller"), { stime: 1, etime: 2, filterkey: "caller_url", filterval: url }, api);
    expect(r.path).toBe(`/open/api/json/tx_caller/1/2/filter/caller_url/${encodeURIComponent(b64)}`);
    const p = buildRequest(operation("calls.tx_caller"), { stime: 1, etime: 2, filterkey: "caller_pcode", filterval: "42" }, api);
    expect(p.path).toBe("/open/api/json/tx_caller/1/2/filter/caller_pcode/42");
  });

  it("sends declared query names only when defined", () => {
    const r = buildRequest(operation("project.event_history"), { stime: 10, etime: 20, oids: [1, -2], progress: undefined, bogus: 5 }, api);
    expect(r.path).toBe("/open/api/json/event/history?stime=10&etime=20&oids=1,-2");
  });

  it("sends declared body names as JSON for POST", () => {
    const r = buildRequest(operation("stat.transaction"), { stime: 10, etime: 20, order: "count", filter: "x" }, api);
    expect(r.method).toBe("POST");
    expect(r.headers["content-type"]).toBe("application/json");
    // stat.transaction declares no `filter` (only httpc does).
    expect(JSON.parse(r.body!)).toEqual({ stime: 10, etime: 20, order: "count" });
  });

  it("honours overrides only for overridable operations", () => {
    const overrides = { "stat.transaction": { method: "GET" as const, path: "/x/stat/{stime}" }, "scalar.tps": { path: "/nope" } };
    const withOverrides = { ...api, overrides };
    const stat = buildRequest(operation("stat.transaction"), { stime: 10, etime: 20 }, withOverrides);
    expect(stat).toMatchObject({ method: "GET", path: "/x/stat/10" });
    expect(stat.body).toBeUndefined();
    expect(buildRequest(operation("scalar.tps"), {}, withOverrides).path).toBe("/open/api/tps");
  });

  it("keeps a path prefix of the base URL", () => {
    const r = buildRequest(operation("scalar.tps"), {}, { ...api, baseUrl: "http://h:8080/gw/" });
    expect(r).toMatchObject({ origin: "http://h:8080", path: "/gw/open/api/tps" });
  });

  it("throws a programming error for a missing placeholder", () => {
    expect(() => buildRequest(operation("range.exception"), { stime: 1 }, api)).toThrow(RequestBuildError);
    expect(() => buildRequest(operation("range.exception"), { stime: 1 }, api)).toThrow(/\{etime\}/);
    expect(() => buildRequest(operation("series.apdex.oids"), { stime: 1, etime: 2, oids: [] }, api)).toThrow(/\{oids\}/);
  });
});

describe("tokenCandidates and authHeaders", () => {
  it("uses the account token without pcode for account operations", () => {
    const op = operation("account.projects");
    expect(tokenCandidates(op, undefined, api, "/p")).toEqual(["account"]);
    expect(authHeaders(op, "account", undefined, api)).toEqual({ "x-service-token": ACCOUNT_TOKEN });
  });

  it("uses the project token and pcode for project operations", () => {
    const op = operation("scalar.tps");
    expect(tokenCandidates(op, 12, api, "/p")).toEqual(["project"]);
    expect(authHeaders(op, "project", 12, api)).toEqual({ "x-service-token": PROJECT_TOKEN, "x-service-pcode": "12" });
  });

  it("tries the project token first where the spec leaves the token open, then the account token", () => {
    const op = operation("range.exception");
    expect(tokenCandidates(op, 12, api, "/p")).toEqual(["project", "account"]);
    expect(tokenCandidates(op, 12, { ...api, accountToken: null }, "/p")).toEqual(["project"]);
    expect(tokenCandidates(op, 99, api, "/p")).toEqual(["account"]);
    expect(authHeaders(op, "account", 12, api)).toEqual({ "x-service-token": ACCOUNT_TOKEN, "x-service-pcode": "12" });
  });

  it("throws AuthError when no usable token is configured", () => {
    expect(() => tokenCandidates(operation("scalar.tps"), 99, api, "/p")).toThrow(AuthError);
    expect(() => tokenCandidates(operation("account.projects"), undefined, { ...api, accountToken: null }, "/p")).toThrow(
      /APM_ACCOUNT_TOKEN/,
    );
  });

  it("refuses a pcode-sending operation without pcode", () => {
    expect(() => tokenCandidates(operation("scalar.tps"), undefined, api, "/p")).toThrow(RequestBuildError);
  });
});
