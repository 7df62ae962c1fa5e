// Tokens, headers, fault injection, latency, the rate limit, the request log and event state.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callSandbox, FAULT_KINDS, type FaultKind, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2025, 0, 15, 12, 0);
const STIME = Date.UTC(2025, 0, 14, 9, 0);
const window = { stime: STIME, etime: STIME + HOUR };

describe("tokens and headers", () => {
  let sb: Sandbox;
  let a = 0;
  let b = 0;

  beforeAll(async () => {
    sb = await startSandbox({
      seed: 4,
      projects: 2,
      now: () => NOW,
      burstKeys: 0,
      accountToken: "acct-secret",
      projectTokens: { 1001: "p1001-secret" },
    });
    [a, b] = sb.projects.map((p) => p.pcode) as [number, number];
  });
  afterAll(() => sb.stop());

  it("uses the given tokens and derives the others; one pcode is beyond 2^31", () => {
    expect(sb.accountToken).toBe("acct-secret");
    expect(sb.projects[0]).toMatchObject({ pcode: 1001, token: "p1001-secret" });
    expect(sb.projects[1]!.pcode).toBeGreaterThan(2 ** 31);
    expect(sb.projects[1]!.token).toMatch(/^sbx-p3000000001-/);
  });

  it.each([
    ["wrong token", "project.spot", { pcode: 1001, token: "nope" }],
    ["no token", "project.spot", { pcode: 1001, token: null }],
    ["project op with the account token", "project.spot", { pcode: 1001, token: "acct-secret" }],
    ["account op with a project token", "account.projects", { token: "p1001-secret" }],
    ["token of another project", "stat.transaction", { pcode: 3000000001, token: "p1001-secret", body: window }],
    ["no pcode header", "project.spot", { token: "p1001-secret" }],
    ["unknown pcode", "project.spot", { pcode: 42, token: "p1001-secret" }],
  ] as const)("%s: 401 with a JSON error body", async (_name, opId, opts) => {
    const res = await callSandbox(sb, opId, opts);
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ code: 401, msg: expect.stringMatching(/^\[F\] /) });
    expect(res.text).not.toContain("secret");
  });

  it("by default (strict profile) range and series operations take only the project token", async () => {
    expect(sb.profile.rangeToken).toBe("project");
    for (const op of ["range.sql", "series.apdex.avg"]) {
      expect((await callSandbox(sb, op, { pcode: a, token: "p1001-secret", params: window })).status).toBe(200);
      expect((await callSandbox(sb, op, { pcode: a, token: "acct-secret", params: window })).status).toBe(401);
    }
    expect((await callSandbox(sb, "account.projects")).status).toBe(200);
    expect((await callSandbox(sb, "project.spot", { pcode: b })).status).toBe(200);
  });

  it("server profiles resolve each open point either way", async () => {
    const p = await startSandbox({ projects: 1, burstKeys: 0, accountToken: "acct", projectTokens: { 1001: "p1" } });
    const status = async (op: string, token: string) => (await callSandbox(p, op, { pcode: 1001, token, params: window })).status;
    try {
      p.setProfile({ rangeToken: "account" });
      expect([await status("range.sql", "p1"), await status("range.sql", "acct")]).toEqual([401, 200]);
      p.setProfile({ rangeToken: "both" });
      expect([await status("range.sql", "p1"), await status("range.sql", "acct")]).toEqual([200, 200]);
      // Project-only operations never take the account token, whatever the profile.
      expect(await status("project.spot", "acct")).toBe(401);
      const groups = (v: string) => fetch(`${p.url}${v}`, { headers: { [p.tokenHeader]: "acct" } }).then((r) => r.status);
      expect([await groups("/open/api/json/groups"), await groups("/open/api/v2/json/groups")]).toEqual([200, 404]);
      p.setProfile({ groupsPath: "v2" });
      expect([await groups("/open/api/json/groups"), await groups("/open/api/v2/json/groups")]).toEqual([404, 200]);
      const stat = async () => (await callSandbox(p, "stat.transaction", { pcode: 1001, token: "p1", body: window })).status;
      expect(await stat()).toBe(200);
      p.setProfile({ statsAtDefaultPath: false });
      expect(await stat()).toBe(404);
    } finally {
      await p.stop();
    }
  });

  it("a server clock offset moves the Date header, the clamp and the statistics timestamp", async () => {
    const p = await startSandbox({ projects: 1, burstKeys: 0, profile: { clockOffsetMs: -3 * 3_600_000 } });
    try {
      const now = Date.now();
      const res = await callSandbox(p, "stat.transaction", { pcode: 1001, body: { stime: now - 4 * 3_600_000, etime: now } });
      const body = res.json as { etime: number; timestamp: number };
      expect(Math.abs(body.timestamp - (now - 3 * 3_600_000))).toBeLessThan(5_000);
      // etime later than the server clock is clamped to it: the answer ends 3 h before it was asked to.
      expect(Math.abs(body.etime - (now - 3 * 3_600_000))).toBeLessThan(5_000);
      expect(Math.abs(Date.parse(res.headers.get("date")!) - (now - 3 * 3_600_000))).toBeLessThan(5_000);
    } finally {
      await p.stop();
    }
  });

  it("masks tokens in the project list", async () => {
    const body = (await callSandbox(sb, "account.projects")).json as { data: { projectCode: number; apiToken: string }[]; total: number };
    expect(body.total).toBe(2);
    expect(body.data.map((p) => p.projectCode)).toEqual([1001, 3000000001]);
    expect(body.data[0]!.apiToken).toMatch(/^p\*+t$/);
  });

  it("takes the header names it is given", async () => {
    const custom = await startSandbox({ projects: 1, burstKeys: 0, tokenHeader: "X-Whatap-Token", pcodeHeader: "x-whatap-pcode" });
    try {
      const token = custom.projects[0]!.token;
      const plain = await fetch(`${custom.url}/open/api/json/spot`, { headers: { "x-service-token": token, "x-service-pcode": "1001" } });
      expect(plain.status).toBe(401);
      expect((await callSandbox(custom, "project.spot", { pcode: 1001 })).status).toBe(200);
      expect(custom.tokenHeader).toBe("x-whatap-token");
    } finally {
      await custom.stop();
    }
  });

  it("unknown paths: 404; a known path with the wrong method: 405", async () => {
    expect((await fetch(`${sb.url}/open/api/nope`)).status).toBe(404);
    expect((await fetch(`${sb.url}/open/api/v2/stat/sql`)).status).toBe(405);
  });

  it("logs method, path, operation, pcode, window, status and connection", async () => {
    sb.clearLog();
    await callSandbox(sb, "stat.sql", { pcode: b, body: window });
    await callSandbox(sb, "range.remote", { pcode: a, params: window });
    expect(sb.requestLog).toEqual([
      {
        method: "POST",
        path: "/open/api/v2/stat/sql",
        opId: "stat.sql",
        pcode: b,
        ...window,
        status: 200,
        at: expect.any(Number),
        connection: expect.any(Number),
      },
      {
        method: "GET",
        path: `/open/api/json/remote/${STIME}/${STIME + HOUR}`,
        opId: "range.remote",
        pcode: a,
        ...window,
        status: 200,
        at: expect.any(Number),
        connection: expect.any(Number),
      },
    ]);
  });
});

describe("faults", () => {
  let sb: Sandbox;
  let pcode = 0;
  const spot = (signal?: AbortSignal) => callSandbox(sb, "stat.remote", { pcode, body: window, ...(signal && { signal }) });

  beforeAll(async () => {
    sb = await startSandbox({ seed: 8, projects: 1, now: () => NOW, burstKeys: 0, stallMs: 400 });
    pcode = sb.projects[0]!.pcode;
  });
  afterAll(() => sb.stop());

  const only = (kind: FaultKind) => sb.setFaults(1, [kind]);

  it("429 with Retry-After: 1", async () => {
    only("429");
    const res = await spot();
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
  });

  it.each(["500", "502", "503"] as const)("%s with a JSON error body", async (kind) => {
    only(kind);
    const res = await spot();
    expect(res.status).toBe(Number(kind));
    expect(res.json).toMatchObject({ code: Number(kind) });
  });

  it("reset: the connection is destroyed", async () => {
    only("reset");
    await expect(spot()).rejects.toThrow();
    expect(sb.requestLog.at(-1)).toMatchObject({ fault: "reset", status: 0 });
  });

  it("stall: no answer until the client gives up, then the socket closes after stallMs", async () => {
    only("stall");
    await expect(spot(AbortSignal.timeout(100))).rejects.toThrow();
    const t0 = Date.now();
    await expect(spot()).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    expect(sb.requestLog.at(-1)).toMatchObject({ fault: "stall", status: 0 });
  });

  it("truncated: a 200 with half a JSON body", async () => {
    sb.setFaults(0);
    const full = await spot();
    only("truncated");
    const res = await spot();
    expect(res.status).toBe(200);
    expect(res.json).toBeUndefined();
    expect(res.text.length).toBe(Math.floor(full.text.length / 2));
    expect(full.text.startsWith(res.text)).toBe(true);
  });

  it("html: a 502 HTML error page", async () => {
    only("html");
    const res = await spot();
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.text).toMatch(/^<!DOCTYPE html>/);
  });

  it("error-body: a 200 carrying an error object", async () => {
    only("error-body");
    const res = await spot();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ msg: "temporarily unavailable", code: 500 });
  });

  it("a mix at a rate is reproducible from (seed, request counter)", async () => {
    const run = async () => {
      const s = await startSandbox({
        seed: 8,
        projects: 1,
        now: () => NOW,
        burstKeys: 0,
        faultRate: 0.4,
        faults: ["500", "503", "429", "error-body"],
      });
      try {
        for (let i = 0; i < 60; i++) await callSandbox(s, "scalar.tps", { pcode: 1001 });
        return s.requestLog.map((e) => `${e.status}${e.fault ?? ""}`);
      } finally {
        await s.stop();
      }
    };
    const [x, y] = [await run(), await run()];
    expect(x).toEqual(y);
    const faulted = x.filter((e) => e !== "200").length;
    expect(faulted).toBeGreaterThan(10);
    expect(faulted).toBeLessThan(40);
    expect(new Set(x.filter((e) => e !== "200")).size).toBe(4);
  });

  it("every kind is known to the option parser", () => {
    expect(FAULT_KINDS).toEqual(["429", "500", "502", "503", "reset", "stall", "truncated", "html", "error-body"]);
  });
});

describe("latency and rate limit", () => {
  it("latency: each request waits within the range", async () => {
    const sb = await startSandbox({ projects: 1, burstKeys: 0, latencyMs: [80, 120] });
    try {
      const t0 = performance.now();
      await callSandbox(sb, "scalar.act_agent", { pcode: 1001 });
      expect(performance.now() - t0).toBeGreaterThanOrEqual(78);
    } finally {
      await sb.stop();
    }
  });

  it("token bucket: a burst over the rate gets 429 with Retry-After", async () => {
    const sb = await startSandbox({ projects: 1, burstKeys: 0, rateLimitRps: 5 });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => callSandbox(sb, "scalar.act_agent", { pcode: 1001 })));
      const limited = results.filter((r) => r.status === 429);
      expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(6);
      expect(limited.length).toBeGreaterThanOrEqual(14);
      expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(sb.requestLog.filter((e) => e.fault === "rate-limit")).toHaveLength(limited.length);
    } finally {
      await sb.stop();
    }
  });
});

describe("events open and resolve later", () => {
  it("the same uuid is ON with offTime 0, then OFF with offTime set once the clock passes its end", async () => {
    let clock = Date.UTC(2025, 0, 10, 0, 0);
    const sb = await startSandbox({ seed: 6, projects: 1, now: () => clock, burstKeys: 0 });
    try {
      const stime = clock - DAY;
      const before = (await callSandbox(sb, "project.event_history", { pcode: 1001, params: { stime, etime: clock } })).json as Record<
        string,
        unknown
      >[];
      const open = before.filter((e) => e.status === "ON");
      expect(open.length).toBeGreaterThan(0);
      expect(open.every((e) => e.offTime === 0 && e.disabled === false)).toBe(true);
      const progress = (await callSandbox(sb, "project.event_history", { pcode: 1001, params: { stime, etime: clock, progress: "true" } }))
        .json;
      expect(progress).toEqual(open);
      clock += 10 * DAY;
      const after = (await callSandbox(sb, "project.event_history", { pcode: 1001, params: { stime, etime: stime + DAY } })).json as Record<
        string,
        unknown
      >[];
      expect(after.map((e) => e.uuid)).toEqual(before.map((e) => e.uuid));
      const resolved = after.filter((e) => open.some((o) => o.uuid === e.uuid) && e.status === "OFF");
      expect(resolved.length).toBeGreaterThan(0);
      for (const e of resolved) {
        expect(e.offTime as number).toBeGreaterThan(e.eventTime as number);
        expect(e.id).toBe(open.find((o) => o.uuid === e.uuid)!.id);
      }
      expect(sb.truth.events(1001, stime, stime + DAY, clock)).toEqual(after);
      // Events that have not happened yet by the clock are not served.
      const future = (await callSandbox(sb, "project.event_history", { pcode: 1001, params: { stime: clock, etime: clock + DAY } })).json;
      expect(future).toEqual([]);
    } finally {
      await sb.stop();
    }
  });
});
