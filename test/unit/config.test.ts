import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

describe("config", () => {
  it("reports every problem at once", () => {
    try {
      loadConfig({ env: { APM_PROJECTS: "abc:tk-9f8e7d,5", APM_DB_SCHEMA: "Bad-Name" } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems;
      expect(problems.some((p) => p.includes("APM_BASE_URL"))).toBe(true);
      expect(problems.some((p) => p.includes("APM_DB_SCHEMA"))).toBe(true);
      expect(problems.filter((p) => p.startsWith("APM_PROJECTS"))).toHaveLength(2);
      expect((e as Error).message).not.toContain("tk-9f8e7d");
    }
  });

  it("parses projects and defaults", () => {
    const c = loadConfig({ env: { APM_BASE_URL: "http://127.0.0.1:1/", APM_PROJECTS: "12:secret-a, 3000000000:secret-b" } });
    expect(c.api.baseUrl).toBe("http://127.0.0.1:1");
    expect(c.api.projects.map((p) => p.pcode)).toEqual([12, 3000000000]);
    expect(JSON.stringify(c)).not.toContain("secret-a");
    expect(c.api.tokenHeader).toBe("x-service-token");
    expect(c.dbSchema).toBe("apm");
  });

  it("lower-cases the auth header names (node:http and undici compare them lower-cased)", () => {
    const c = loadConfig({
      env: { APM_BASE_URL: "https://api.example.com", APM_TOKEN_HEADER: "X-WhaTap-Token", APM_PCODE_HEADER: "X-WhaTap-Pcode" },
    });
    expect(c.api.tokenHeader).toBe("x-whatap-token");
    expect(c.api.pcodeHeader).toBe("x-whatap-pcode");
    expect(c.api.retries).toBe(5);
    expect(c.api.timeoutMs).toBe(30_000);
  });
  it("lets commands that send no request run without APM_BASE_URL, but still checks a set one", () => {
    expect(loadConfig({ env: {}, requireBaseUrl: false }).api.baseUrl).toBe("");
    expect(() => loadConfig({ env: {} })).toThrow(/APM_BASE_URL is not set/);
    expect(() => loadConfig({ env: { APM_BASE_URL: "ftp://x" }, requireBaseUrl: false })).toThrow(/not an http\(s\) URL/);
  });
});
