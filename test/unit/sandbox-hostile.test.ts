// The hostile modes of the sandbox (issue 21 item 8): each tells the lie it names, on the
// operations it is given, and the ground truth stays what the server holds.
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseOptions } from "../../jobs/simulate.ts";
import { requestPath } from "../../src/sandbox/call.ts";
import {
  HOSTILE_MODES,
  type HostileMode,
  parseHostileModes,
  REDIRECT_ORIGIN,
  type Sandbox,
  startSandbox,
} from "../../src/sandbox/index.ts";

const HOUR = 3_600_000;
const NOW = Date.UTC(2025, 0, 15, 12, 0);
const STIME = Date.UTC(2025, 0, 14, 9, 0);
const window = { stime: STIME, etime: STIME + HOUR };

let sb: Sandbox;
let pcode = 0;
beforeAll(async () => {
  sb = await startSandbox({ seed: 3, projects: 1, now: () => NOW, burstKeys: 0 });
  pcode = sb.projects[0]!.pcode;
});
afterAll(() => sb.stop());

/** One raw exchange (no redirect followed, no decompression, a deadline of our own). */
async function raw(opId: string, modes: HostileMode[], opts: { params?: Record<string, number>; ms?: number } = {}) {
  sb.setHostile({ modes, retryAfterS: 90, trickleMs: 20 });
  const project = sb.projects[0]!;
  const stat = opId.startsWith("stat.");
  const path = requestPath(opId, opts.params ?? window, sb);
  const res = await request(`${sb.url}${path}`, {
    method: stat ? "POST" : "GET",
    headers: { [sb.tokenHeader]: project.token, [sb.pcodeHeader]: String(pcode), "content-type": "application/json" },
    body: stat ? JSON.stringify(window) : null,
    signal: AbortSignal.timeout(opts.ms ?? 5_000),
  });
  const chunks: Buffer[] = [];
  try {
    for await (const c of res.body) chunks.push(c as Buffer);
  } catch {
    // A trickle is cut by our deadline: what came so far is the answer.
  }
  sb.setHostile(null);
  const text = Buffer.concat(chunks).toString("utf8");
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.concat(chunks), text };
}

const honest = async (opId: string) => JSON.parse((await raw(opId, [])).text) as Record<string, unknown>;

describe("hostile modes", () => {
  it("parse from a comma list, naming the known ones on a typo; `simulate` takes them as flags", () => {
    expect(parseHostileModes("nul, count-lie")).toEqual(["nul", "count-lie"]);
    expect(() => parseHostileModes("nul,lies")).toThrow(/unknown hostile mode\(s\): lies \(known: retry-after/);
    expect(HOSTILE_MODES).toContain("trickle");
    const flags = { hostile: "count-lie,trickle", hostileOps: "stat.*,probe", hostileRate: "0.25", retryAfter: "90", trickleMs: "50" };
    expect(parseOptions(flags).hostile).toEqual({
      modes: ["count-lie", "trickle"],
      ops: ["stat.*", "probe"],
      rate: 0.25,
      retryAfterS: 90,
      trickleMs: 50,
    });
    expect(parseOptions({}).hostile).toBeUndefined();
    expect(() => parseOptions({ hostile: "lies" })).toThrow(/--hostile: unknown hostile mode/);
    expect(() => parseOptions({ hostile: "nul", hostileRate: "2" })).toThrow(/--hostile-rate: invalid value "2"/);
  });

  it("nul and surrogate: in every text field but the keys, and in an unknown field; keys and counts untouched", async () => {
    const truth = await honest("stat.sql");
    for (const [mode, bad] of [
      ["nul", "\u0000"],
      ["surrogate", "\ud800"],
    ] as const) {
      const body = JSON.parse((await raw("stat.sql", [mode])).text) as { data: Record<string, unknown>[] };
      const want = (truth.data as Record<string, unknown>[]).length;
      expect(body.data.length).toBe(want);
      for (const [i, r] of body.data.entries()) {
        const t = (truth.data as Record<string, unknown>[])[i]!;
        expect(String(r.sql)).toContain(bad);
        expect(String(r.sql).replace(bad, "")).toBe(t.sql);
        expect(r[`${mode}Note`]).toBe(`java${bad}string`);
        expect([r.sqlHash, r.dbcHash, r.serviceHash, r.count]).toEqual([t.sqlHash, t.dbcHash, t.serviceHash, t.count]);
      }
    }
    // The remote key is the ip text: it is left alone.
    const remote = JSON.parse((await raw("stat.remote", ["nul"])).text) as { data: Record<string, unknown>[] };
    expect(remote.data.every((r) => !String(r.ip).includes("\u0000") && String(r.city).includes("\u0000"))).toBe(true);
  });

  it("count lies: half the records with the totals unchanged; total below retrieved; a negative total", async () => {
    const truth = await honest("stat.transaction");
    const lie = JSON.parse((await raw("stat.transaction", ["count-lie"])).text) as Record<string, unknown>;
    expect(lie.total).toBe(truth.total);
    expect(lie.retrievedTotal).toBe(truth.retrievedTotal);
    expect((lie.data as unknown[]).length).toBe(Math.floor((truth.data as unknown[]).length / 2));
    expect(Number(truth.total)).toBeGreaterThan(1);
    const below = JSON.parse((await raw("stat.transaction", ["total-below-retrieved"])).text) as Record<string, unknown>;
    expect(below.total).toBe(Number(truth.retrievedTotal) - 1);
    const range = JSON.parse((await raw("range.sql", ["negative-total", "count-lie"])).text) as Record<string, unknown>;
    expect(range.total).toBe(-1);
  });

  it.each([
    ["empty-body", ""],
    ["null-body", "null"],
    ["array-body", "[]"],
    ["string-body", '"ok"'],
  ] as const)("%s: a 200 with %j", async (mode, text) => {
    const res = await raw("stat.error", [mode]);
    expect({ status: res.status, text: res.text }).toEqual({ status: 200, text });
  });

  it.each([
    ["echo-short", STIME, STIME + HOUR / 2],
    ["echo-late-start", STIME + HOUR / 2, STIME + HOUR],
    ["echo-earlier", STIME - HOUR / 2, STIME + HOUR / 2],
    ["echo-later", STIME + HOUR / 2, STIME + (3 * HOUR) / 2],
  ] as const)("%s: answers and echoes another window, with that window's data", async (mode, stime, etime) => {
    const body = JSON.parse((await raw("stat.remote", [mode])).text) as Record<string, unknown>;
    expect({ stime: body.stime, etime: body.etime }).toEqual({ stime, etime });
    expect(body.total).toBe(sb.truth.total(pcode, "stat.remote", stime, etime));
  });

  it("bad-record, deep-record and overflow: the first record carries them, as text JSON.stringify cannot write", async () => {
    const bad = JSON.parse((await raw("stat.transaction", ["bad-record"])).text) as { data: Record<string, unknown>[] };
    expect(bad.data[0]!.count).toBe("n/a");
    const deep = (await raw("stat.transaction", ["deep-record"])).text;
    expect(deep).toContain(`"nested":${"[".repeat(5000)}]`);
    const over = (await raw("stat.transaction", ["overflow"])).text;
    expect(over).toContain('"huge":1e400');
  });

  it("retry-after (seconds and date forms) and redirect answer before the request is handled", async () => {
    const secs = await raw("stat.sql", ["retry-after"]);
    expect({ status: secs.status, retryAfter: secs.headers["retry-after"] }).toEqual({ status: 503, retryAfter: "90" });
    const date = await raw("stat.sql", ["retry-after-date"]);
    expect(date.status).toBe(503);
    expect(Date.parse(String(date.headers["retry-after"]))).toBe(NOW + 90_000);
    const moved = await raw("stat.sql", ["redirect"]);
    expect({ status: moved.status, location: moved.headers.location }).toEqual({
      status: 307,
      location: `${REDIRECT_ORIGIN}/open/api/v2/stat/sql`,
    });
  });

  it("gzip and deflate bombs: a small body that says it is compressed", async () => {
    for (const kind of ["gzip", "deflate"] as const) {
      const res = await raw("stat.sql", [`${kind}-bomb`]);
      expect({ status: res.status, encoding: res.headers["content-encoding"] }).toEqual({ status: 200, encoding: kind });
      expect(res.bytes.length).toBeLessThan(256 * 1024);
    }
  });

  it("trickle: the headers at once, then a byte at a time for ever, on any path (the clock probe's too)", async () => {
    for (const [opId, params] of [
      ["stat.sql", undefined],
      ["range.sql", window],
    ] as const) {
      const res = await raw(opId, ["trickle"], { ...(params ? { params } : {}), ms: 400 });
      expect(res.status).toBe(200);
      expect(res.bytes.length).toBeGreaterThan(3);
      expect(res.bytes.length).toBeLessThan(40);
    }
    sb.setHostile({ modes: ["trickle"], ops: ["probe"], trickleMs: 20 });
    const t0 = performance.now();
    const probe = await request(`${sb.url}/`, { signal: AbortSignal.timeout(300) });
    expect(probe.statusCode).toBe(404);
    await expect(probe.body.text()).rejects.toThrow();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    // trickle-head: not even the status line is complete within the deadline.
    sb.setHostile({ modes: ["trickle-head"], ops: ["probe"], trickleMs: 20 });
    const t1 = performance.now();
    await expect(request(`${sb.url}/`, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(performance.now() - t1).toBeGreaterThanOrEqual(250);
    sb.setHostile({ modes: ["trickle-head"], ops: ["probe"], trickleMs: 1 });
    const slow = await request(`${sb.url}/`, { signal: AbortSignal.timeout(3_000) });
    expect({ status: slow.statusCode, date: typeof slow.headers.date }).toEqual({ status: 404, date: "string" });
    slow.body.destroy();
    // An operation is not the probe: answered at once.
    const quick = await raw("stat.sql", []);
    expect(quick.status).toBe(200);
    sb.setHostile(null);
  });

  it("apply only to the operations named, and the request log says which requests got them", async () => {
    sb.clearLog();
    sb.setHostile({ modes: ["empty-body"], ops: ["stat.*"] });
    const project = sb.projects[0]!;
    const headers = { [sb.tokenHeader]: project.token, [sb.pcodeHeader]: String(pcode) };
    const range = await request(`${sb.url}${requestPath("range.sql", window)}`, { headers });
    expect((await range.body.text()).length).toBeGreaterThan(2);
    sb.setHostile(null);
    const stat = await raw("stat.sql", ["empty-body"]);
    expect(stat.text).toBe("");
    expect(sb.requestLog.map((e) => [e.opId, e.hostile ?? []])).toEqual([
      ["range.sql", []],
      ["stat.sql", ["empty-body"]],
    ]);
  });
});
