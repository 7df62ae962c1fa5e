// Configuration from flags, environment and file: each parsed by zod, every problem at once, each
// named where it came from, with "did you mean" for names that are almost right.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCronItems } from "graphile-worker";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, type LoadOptions, loadConfig, readTime } from "../../src/config.ts";

const dir = mkdtempSync(join(tmpdir(), "apm-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const API = { APM_BASE_URL: "http://127.0.0.1:1", APM_PROJECTS: "12:tok-a" };
let files = 0;

/** Writes `content` as a config file and returns its path. */
function file(content: unknown): string {
  const path = join(dir, `c${++files}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** The problems loadConfig reports (fails the test when it accepts). */
function problems(opts: LoadOptions): string[] {
  try {
    loadConfig(opts);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).problems];
  }
  throw new Error("the configuration was accepted");
}

describe("config", () => {
  it("reports every problem at once", () => {
    const found = problems({ env: { APM_PROJECTS: "abc:tk-9f8e7d,5", APM_DB_SCHEMA: "Bad-Name" }, requireApi: true });
    expect(found.some((p) => p.includes("APM_BASE_URL"))).toBe(true);
    expect(found.some((p) => p.startsWith("APM_DB_SCHEMA"))).toBe(true);
    expect(found.filter((p) => p.startsWith("APM_PROJECTS"))).toHaveLength(2);
    expect(found.join("\n")).not.toContain("tk-9f8e7d");
  });

  it("parses projects and defaults", () => {
    const c = loadConfig({ env: { APM_BASE_URL: "http://127.0.0.1:1/", APM_PROJECTS: "12:secret-a, 3000000000:secret-b" }, now: 1e12 });
    expect(c.api.baseUrl).toBe("http://127.0.0.1:1");
    expect(c.api.projects.map((p) => p.pcode)).toEqual([12, 3000000000]);
    expect(JSON.stringify(c)).not.toContain("secret-a");
    expect(c.api.tokenHeader).toBe("x-service-token");
    expect(c.dbSchema).toBe("apm");
    expect(c.sync.startMs).toBe(1e12 - 7 * 86_400_000);
    expect(c.sync.windowConcurrency).toBe(16);
    expect(Object.isFrozen(c.sync)).toBe(true);
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

  it("needs an address and a token only for commands that send requests; a set address is still checked", () => {
    expect(loadConfig({ env: {} }).api.baseUrl).toBe("");
    expect(problems({ env: { APM_BASE_URL: "ftp://x" } })).toEqual(["APM_BASE_URL: must start with http:// or https://"]);
    const nothing = problems({ env: { APM_BASE_URL: "https://api.example.com" }, requireApi: true });
    expect(nothing).toHaveLength(1);
    expect(nothing[0]).toMatch(/no token is configured, so there is nothing to do: set APM_PROJECTS=.*APM_ACCOUNT_TOKEN/);
    expect(loadConfig({ env: { ...API }, requireApi: true }).api.projects).toHaveLength(1);
    expect(
      loadConfig({ env: { APM_BASE_URL: "https://a.example", APM_ACCOUNT_TOKEN: "acc" }, requireApi: true }).api.accountToken,
    ).not.toBeNull();
  });

  it("names a file's value as the file's key, not as the variable that would win over it", () => {
    const config = file({ start: "last week", baseUrl: "https://api.example.com" });
    const found = problems({ env: {}, configFile: config });
    expect(found).toEqual([
      `config file ${config}: start: expected an ISO date or date-time (UTC unless a zone is given), a duration ago like 7d or 90m, or now, got "last week"`,
    ]);
    // A bad value hides no other and makes no good one look unset (baseUrl is set in the file).
    expect(problems({ env: {}, configFile: config, requireApi: true }).some((p) => p.includes("APM_BASE_URL"))).toBe(false);
  });

  it("takes flags over the environment over the file", () => {
    const config = file({ logFormat: "plain", start: "2026-01-01", settle: "5m" });
    const c = loadConfig({ env: { APM_LOG_FORMAT: "pretty", APM_START: "2026-02-01" }, configFile: config, flags: { logFormat: "json" } });
    expect(c.log.format).toBe("json");
    expect(c.sync.startMs).toBe(Date.UTC(2026, 1, 1));
    expect(c.sync.settleMs).toBe(5 * 60_000);
    expect(problems({ env: {}, flags: { logFormat: "jsn" } })).toEqual([
      '--log-format: one of pretty, json, plain; got "jsn" (did you mean json?)',
    ]);
  });

  it("refuses a grain off the 5-minute grid at load time, naming the key", () => {
    const config = file({ grains: { "stat.sql": "7m", "stat.transactions": "1h", "account.projects": "1h" } });
    expect(problems({ env: {}, configFile: config })).toEqual([
      `config file ${config}: grains["stat.sql"]: must be a positive multiple of 5 minutes (5m, 30m, 1h, 1d), got "7m"`,
      `config file ${config}: grains["stat.transactions"]: unknown stream "stat.transactions" (did you mean stat.transaction?)`,
      `config file ${config}: grains["account.projects"]: account.projects is not fetched in time windows: it has no grain`,
    ]);
    expect(problems({ env: { APM_GRAIN: "7m" } })).toEqual([
      'APM_GRAIN: must be a positive multiple of 5 minutes (5m, 30m, 1h, 1d), got "7m"',
    ]);
  });

  it("accepts overrides only for the operations the spec leaves open, and only method and path", () => {
    const config = file({
      overrides: {
        "stat.transactions": { path: "/x" },
        "range.exception": { path: "/y" },
        "stat.sql": { methd: "GET", path: "/v2/stat/sql" },
      },
    });
    const found = problems({ env: {}, configFile: config });
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/overrides\["stat.transactions"\]: unknown operation "stat.transactions" \(did you mean stat.transaction\?\)/);
    expect(found[1]).toMatch(/overrides\["range.exception"\]: range.exception has a documented method and path; overrides apply only to/);
    expect(found[2]).toBe(`config file ${config}: overrides["stat.sql"]: unknown key "methd" (did you mean method?)`);
    const ok = loadConfig({ env: {}, configFile: file({ overrides: { "stat.sql": { method: "GET", path: "/v2/stat/sql" } } }) });
    expect(ok.api.overrides["stat.sql"]).toEqual({ method: "GET", path: "/v2/stat/sql" });
  });

  it("checks inputs against the streams that take them", () => {
    const config = file({
      inputs: {
        "range.htpc.filtered": [{ host: "a", port: 1 }],
        "stat.sql": [{ host: "a" }],
        "range.httpc.filtered": [{ host: "a", prot: 8080 }],
      },
    });
    const found = problems({ env: {}, configFile: config });
    expect(found).toEqual([
      `config file ${config}: inputs["range.htpc.filtered"]: unknown stream "range.htpc.filtered" (did you mean range.httpc.filtered?)`,
      `config file ${config}: inputs["stat.sql"]: stat.sql needs no inputs (only streams with filters or agent lists do)`,
      `config file ${config}: inputs["range.httpc.filtered"][0]: unknown input "prot" (did you mean port?)`,
      `config file ${config}: inputs["range.httpc.filtered"][0]: missing port`,
    ]);
  });

  it("refuses APM_PROJECTS with another separator than commas, without echoing a token", () => {
    const found = problems({ env: { APM_PROJECTS: "1001:tok1;1002:tok2" } });
    expect(found).toEqual([
      'APM_PROJECTS: entry 1: the token of project 1001 holds a space, ";", ":" or "|": separate entries with commas (pcode:token,pcode:token)',
    ]);
    expect(found.join()).not.toContain("tok1");
    expect(problems({ env: { APM_PROJECTS: "7:a,7:b" } })).toEqual(["APM_PROJECTS: project 7 is listed twice"]);
  });

  it("refuses a token an HTTP header cannot carry (CR/LF, control characters), from every source, without echoing it", () => {
    const path = join(dir, "account-token");
    writeFileSync(path, "acct-SECRET-1\r\nx-injected: 1\n");
    const found = [
      ...problems({ env: { APM_ACCOUNT_TOKEN: "acct-SECRET-1\r\nx: 1" } }),
      ...problems({ env: { APM_ACCOUNT_TOKEN_FILE: path } }),
      ...problems({ env: { APM_PROJECTS: "12:proj-SECRET-2\u0007" } }),
      ...problems({ env: {}, configFile: file({ projects: [{ pcode: 13, token: "proj-SECRET-3\nx" }] }) }),
    ];
    expect(found.map((p) => p.replace(/^config file \S+: /, ""))).toEqual([
      "APM_ACCOUNT_TOKEN: the account token holds a line break (CR or LF) at character 14, which an HTTP header cannot carry: copy the token again without it",
      "APM_ACCOUNT_TOKEN_FILE: the account token holds a line break (CR or LF) at character 14, which an HTTP header cannot carry: copy the token again without it",
      "APM_PROJECTS: entry 1: the token of project 12 holds a control character at character 14, which an HTTP header cannot carry: copy the token again without it",
      "projects[0]: the token of project 13 holds a line break (CR or LF) at character 14, which an HTTP header cannot carry: copy the token again without it",
    ]);
    expect(found.join("\n")).not.toContain("SECRET");
    expect(loadConfig({ env: { APM_ACCOUNT_TOKEN: "acct-T0KEN.x_y~z+/=" } }).api.accountToken?.reveal()).toBe("acct-T0KEN.x_y~z+/=");
  });

  it("refuses an input number beyond 2^53 (an agent id JSON would round to another one)", () => {
    // As the file holds it: JavaScript cannot even write this number.
    const path = file('{"inputs": {"series.thread_count.oids": [{"oids": [-1459620666, 9007199254740993]}]}}');
    expect(problems({ env: {}, configFile: path })).toEqual([
      `config file ${path}: inputs["series.thread_count.oids"][0].oids[1]: a number beyond 2^53 - 1 (read as 9007199254740992): JSON numbers that large lose their last digits, and it would be sent as another value; no agent id (32-bit), port or filter value is that large: check it`,
    ]);
    const fine = loadConfig({
      env: {},
      configFile: file({ inputs: { "series.thread_count.oids": [{ oids: [-1459620666, 2 ** 53 - 1] }] } }),
    });
    expect(fine.sync.inputs["series.thread_count.oids"]).toEqual([{ oids: [-1459620666, 2 ** 53 - 1] }]);
  });

  it("takes the file's streams as a list or a comma string, and refuses unknown and docs-only ids", () => {
    expect(loadConfig({ env: {}, configFile: file({ streams: ["stat", "range.sql"] }) }).sync.streams).toEqual(["stat", "range.sql"]);
    expect(loadConfig({ env: {}, configFile: file({ streams: "stat, range.sql" }) }).sync.streams).toEqual(["stat", "range.sql"]);
    const found = problems({ env: { APM_STREAMS: "stat.transactions,extra.fullgclog" } });
    expect(found[0]).toBe('APM_STREAMS: unknown stream "stat.transactions" (did you mean stat.transaction?) (see `apm-sync streams`)');
    expect(found[1]).toMatch(/^APM_STREAMS: extra.fullgclog is a docs-only operation: it has no table and is not synced/);
  });

  it("listens for /metrics on 127.0.0.1 unless APM_METRICS_HOST (or the file's metricsHost) names another address", () => {
    expect(loadConfig({ env: {} }).metrics.host).toBe("127.0.0.1");
    expect(loadConfig({ env: { APM_METRICS_HOST: "0.0.0.0" } }).metrics.host).toBe("0.0.0.0");
    expect(loadConfig({ env: { APM_METRICS_HOST: " :: " } }).metrics.host).toBe("::");
    expect(loadConfig({ env: {}, configFile: file({ metricsHost: "metrics.internal" }) }).metrics.host).toBe("metrics.internal");
    expect(problems({ env: { APM_METRICS_HOST: "http://0.0.0.0:9464" } })).toEqual([
      'APM_METRICS_HOST: expected an IP address to listen on (127.0.0.1, 0.0.0.0, ::) or a host name, got "http://0.0.0.0:9464"',
    ]);
  });

  it("suggests the right name for a mistyped key or variable", () => {
    const config = file({ projets: [], requestPerSecond: 5 });
    expect(problems({ env: { APM_PROJETS: "1:t", APM_RPS: "fast" }, configFile: config })).toEqual([
      "APM_PROJETS is not a setting of apm-sync (did you mean APM_PROJECTS?)",
      'APM_RPS: expected a number from 0.1 to 10000, got "fast"',
      `config file ${config}: unknown key "projets" (did you mean projects?)`,
      `config file ${config}: unknown key "requestPerSecond" (did you mean requestsPerSecond?)`,
    ]);
    expect(problems({ env: { APM_LOG_LEVEL: "warnn" } })).toEqual([
      'APM_LOG_LEVEL: one of fatal, error, warn, info, debug, trace, silent; got "warnn" (did you mean warn?)',
    ]);
  });

  it("names an unreadable or malformed file and a project without a token in it", () => {
    expect(problems({ env: {}, configFile: join(dir, "missing.json") })).toEqual([
      `config file ${join(dir, "missing.json")}: cannot read it (ENOENT)`,
    ]);
    const bad = file("{ not json");
    expect(problems({ env: {}, configFile: bad })[0]).toMatch(new RegExp(`^config file ${bad}: .*JSON`));
    const noToken = file({ projects: [{ pcode: 5 }, { pcode: "x", token: "t" }] });
    expect(problems({ env: {}, configFile: noToken })).toEqual([
      `config file ${noToken}: projects[0]: project 5 has no token (set token or tokenFile)`,
      `config file ${noToken}: projects[1]: pcode: must be a positive integer`,
    ]);
  });
});

describe("every setting bounded at load (issue 38)", () => {
  const DURATIONS = [
    "APM_DATA_DIR_WAIT",
    "APM_TIMEOUT",
    "APM_GRAIN",
    "APM_LOOKBACK",
    "APM_EVENT_LOOKBACK",
    "APM_OPEN_EVENT_LOOKBACK",
    "APM_SETTLE",
    "APM_DB_RETRY",
    "APM_SHUTDOWN_GRACE",
    "APM_REFRESH_ALONG",
    "APM_WORKER_RECOVERY",
  ];

  it("a duration says its unit: a bare 7 is refused by every duration setting, the file's 7 too; 0 needs none", () => {
    for (const name of DURATIONS)
      expect(problems({ env: { [name]: "7" } })).toEqual([`${name}: say a unit: 7s, 7m, 7h or 7d (a bare number has none), got "7"`]);
    const config = file({ timeout: 30000 });
    expect(problems({ env: {}, configFile: config })).toEqual([
      `config file ${config}: timeout: say a unit: 30000s, 30000m, 30000h or 30000d (a bare number has none), got 30000`,
    ]);
    expect(loadConfig({ env: { APM_LOOKBACK: "0", APM_SETTLE: "0" }, configFile: file({ eventLookback: 0 }) }).sync).toMatchObject({
      lookbackMs: 0,
      settleMs: 0,
      eventLookbackMs: 0,
    });
  });

  it("every duration has a maximum; timers stay within Node's timer range (30d used to fire after 1 ms)", () => {
    const timers = ["APM_DATA_DIR_WAIT", "APM_TIMEOUT", "APM_DB_RETRY", "APM_SHUTDOWN_GRACE", "APM_REFRESH_ALONG", "APM_WORKER_RECOVERY"];
    for (const name of timers) {
      expect(problems({ env: { [name]: "30d" } })).toEqual([`${name}: must be at most 1d, got "30d"`]);
      expect(loadConfig({ env: { [name]: "24h" } })).toBeDefined();
    }
    expect(24 * 3_600_000).toBeLessThan(2 ** 31 - 1);
    for (const name of ["APM_LOOKBACK", "APM_EVENT_LOOKBACK", "APM_OPEN_EVENT_LOOKBACK", "APM_SETTLE"]) {
      expect(problems({ env: { [name]: "1000000d" } })).toEqual([`${name}: must be at most 3650d, got "1000000d"`]);
      expect(problems({ env: { [name]: "99999999999999999999s" } })).toEqual([
        `${name}: must be at most 3650d, got "99999999999999999999s"`,
      ]);
    }
    expect(problems({ env: { APM_GRAIN: "730d" } })).toEqual(['APM_GRAIN: must be at most 365d, got "730d"']);
    expect(problems({ env: { APM_TIMEOUT: "0s" } })).toEqual(['APM_TIMEOUT: must be at least 1s, got "0s"']);
  });

  it("a time lies from 2000-01-01 to a day from now, relative or absolute, naming the date read", () => {
    const now = Date.UTC(2026, 0, 10, 12);
    const start = (v: string) => problems({ env: { APM_START: v }, now });
    expect(start("99999999999999999999s")).toEqual([
      'APM_START: must be from 2000-01-01 to a day from now, got "99999999999999999999s" (beyond any calendar)',
    ]);
    expect(start("1000000d")).toEqual([
      'APM_START: must be from 2000-01-01 to a day from now, got "1000000d" (-000712-02-13T12:00:00.000Z)',
    ]);
    expect(start("1999-12-31")).toEqual([
      'APM_START: must be from 2000-01-01 to a day from now, got "1999-12-31" (1999-12-31T00:00:00.000Z)',
    ]);
    expect(start("2026-01-12")).toEqual([
      'APM_START: must be from 2000-01-01 to a day from now, got "2026-01-12" (2026-01-12T00:00:00.000Z)',
    ]);
    expect(start("7")[0]).toMatch(/^APM_START: expected an ISO date or date-time .* got "7"$/);
    expect(loadConfig({ env: { APM_START: "2000-01-01" }, now }).sync.startMs).toBe(Date.UTC(2000, 0, 1));
    expect(loadConfig({ env: { APM_START: "2026-01-11" }, now }).sync.startMs).toBe(Date.UTC(2026, 0, 11));
  });

  it("APM_SCHEDULE: every field within its range, steps from 1, ranges upwards, a day that exists", () => {
    const refused = {
      "61 * * * *": "minute: 61 is outside 0-59",
      "*/0 * * * *": 'minute: the step of "*/0" must be from 1 to 60',
      "0 24 * * *": "hour: 24 is outside 0-23",
      "0 0 0 * *": "day of month: 0 is outside 1-31",
      "0 0 * 13 *": "month: 13 is outside 1-12",
      "0 0 * * 8": "day of week: 8 is outside 0-7",
      "0-30/5 * * * *": 'minute: "0-30/5" is not a number, a range a-b, * or */n',
      "30-10 * * * *": 'minute: the range "30-10" must go upwards',
      "0 0 31 2,4 *": "never fires: no month it names has a day it names",
      "*/10 * * *": "expected a cron expression of five fields",
    };
    for (const [cron, says] of Object.entries(refused)) {
      const found = problems({ env: { APM_SCHEDULE: cron } });
      expect(found).toHaveLength(1);
      expect(found[0]).toContain(`APM_SCHEDULE: ${says}`);
      expect(found[0]).toContain(`got ${JSON.stringify(cron)}`);
    }
    for (const cron of ["*/10 * * * *", "0 3 * * 1-5", "0,30 */2 1 1-12 7", "0 0 29 2 *", "0 0 31 2 1"]) {
      expect(loadConfig({ env: { APM_SCHEDULE: cron } }).queue.schedule).toBe(cron);
      // What is accepted here, the worker's crontab reads.
      expect(() => parseCronItems([{ task: "t", match: cron, identifier: "t" }])).not.toThrow();
    }
  });

  it("parses every URL setting as its driver will, naming the setting, never echoing the URL", () => {
    const found = problems({
      env: {
        APM_BASE_URL: "http://api.exa mple.com",
        DATABASE_URL: "postgres://etl:pa%zzword@db/analytics",
        APM_PUSHGATEWAY_URL: "http:// pushgateway:9091",
        https_proxy: "http://user:s3cret@pro xy:3128",
        HTTP_PROXY: "ftp://proxy",
      },
    });
    expect(found).toEqual([
      "APM_BASE_URL: holds a space or line break at character 15; a URL cannot (percent-encode it: %20)",
      "DATABASE_URL: is not a URL (a character that must be percent-encoded, like % or @ in a password?)",
      "APM_PUSHGATEWAY_URL: holds a space or line break at character 8; a URL cannot (percent-encode it: %20)",
      "HTTP_PROXY: must start with http:// or https:// or socks:// or socks5://",
      "https_proxy: holds a space or line break at character 23; a URL cannot (percent-encode it: %20)",
    ]);
    expect(found.join("\n")).not.toMatch(/s3cret|pa%zz/);
    const fine = loadConfig({ env: { DATABASE_URL: "postgres://etl:p%40ss@db1,db2:5433/analytics", HTTPS_PROXY: "http://proxy:3128" } });
    expect(fine.databaseUrl).toBe("postgres://etl:p%40ss@db1,db2:5433/analytics");
  });
});

describe("times", () => {
  const now = Date.UTC(2026, 0, 10, 12);
  it("take the same forms everywhere: ISO, a duration ago, now", () => {
    expect(readTime("2026-01-02", now)).toEqual({ ms: Date.UTC(2026, 0, 2) });
    expect(readTime("2d", now)).toEqual({ ms: now - 2 * 86_400_000 });
    expect(readTime("90m", now)).toEqual({ ms: now - 90 * 60_000 });
    expect(readTime("now", now)).toEqual({ ms: now });
    expect(readTime("12345", now)).toHaveProperty("problem");
    expect(readTime("last week", now)).toHaveProperty("problem");
    expect(loadConfig({ env: { APM_START: "now" }, now }).sync.startMs).toBe(now);
  });
});
