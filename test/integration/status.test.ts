// `apm-sync status` as a new user reads it (issue 19 point 5), the real CLI over a ledger written
// by real runs against the sandbox: more than 200 failed windows of one error (an overridden path
// the server answers 404 to), auth failures of a wrong project token on several streams, and
// configured streams and a project that never ran. The total adds up to the per-stream column,
// identical errors are one line with a count and the window span, each piece of advice is said
// once, every configured stream appears, and --json says the same.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { DAY, type EngineHarness, runEngine, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 0, 10, 0, 0);
const FROM = NOW - 5 * DAY;
const CONFIGURED = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"];
const WRONG_TOKEN = ["stat.httpc", "stat.error", "stat.remote"];

let h: EngineHarness;
let dir: string;
let env: Record<string, string>;

interface StatusJson {
  streams: { pcode: number; stream: string; failedWindows: number; neverRun: boolean }[];
  failed: { total: number; groups: { error: string; advice: string | null; windows: number; streams: string[]; pcodes: number[] }[] };
}

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, projects: 3, burstKeys: 0 });
  dir = await mkdtemp(join(tmpdir(), "apm-status-"));
  const [a, b] = h.pcodes;
  const config = join(dir, "config.json");
  await writeFile(config, JSON.stringify({ overrides: { "stat.sql": { path: "/open/api/v2/stat/nowhere" } } }));
  // 5 days of hourly windows for two projects: 240 stat.sql windows answered 404.
  const backfill = { command: "backfill" as const, mode: { kind: "backfill" as const, from: FROM, to: NOW } };
  await h.run({ ...backfill, streams: ["stat.transaction", "stat.sql"], projects: [a!, b!] }, { APM_CONFIG: config });
  // Project b's token refused on three streams: each records the failure and stops. One run a
  // stream: in one run the first refusal stops the project's other streams, which then record it
  // or not depending on whether their first request had left (one stream only, once in a full suite).
  for (const stream of WRONG_TOKEN)
    await runEngine(
      { baseUrl: h.sandbox.url, projects: [{ pcode: b!, token: "wrong-T0KEN-x9" }], database: h.db, now: h.now },
      { ...backfill, mode: { kind: "backfill", from: NOW - DAY, to: NOW }, streams: [stream] },
    );
  env = cliEnv({
    baseUrl: "http://unused.invalid",
    databaseUrl: h.db.url,
    projects: h.sandbox.projects,
    extra: { APM_STREAMS: CONFIGURED.join(","), APM_LOG_LEVEL: "warn" },
  });
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("apm-sync status", () => {
  it("totals add up, identical errors are one line with a count, advice once, never-run streams listed", async () => {
    const [a, b, c] = h.pcodes;
    const run = await runCli(["status"], env);
    expect(run.code, run.stderr).toBe(0);
    const text = run.stdout;
    const ledger = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows WHERE status = 'failed'`;
    const total = ledger[0]!.n;
    expect(total).toBeGreaterThan(240);
    // The per-stream failed column (the 6th) adds up to the total the text names.
    const rows = text.split("\n").filter((l) => /^ {2}[a-z]+\.[a-z_.]+/.test(l));
    expect(rows.length).toBe(3 * CONFIGURED.length);
    expect(rows.reduce((sum, l) => sum + Number(l.trim().split(/\s{2,}/)[5]), 0)).toBe(total);
    expect(text).toContain(`failed windows: ${total} (2 different errors;`);
    expect(text).toMatch(
      new RegExp(`^ {2}x240 {2}HTTP 404.*\\n {8}projects ${a}, ${b}: stat\\.sql; windows 2026-01-05 00:00Z \\.\\. 2026-01-09 23:50Z$`, "m"),
    );
    // One group over the streams the refusal stopped, whichever operation each line names.
    const refused = await h.sql<{ stream: string }[]>`
      SELECT DISTINCT stream FROM sync_windows WHERE status = 'failed' AND error LIKE 'authentication failed%' ORDER BY stream`;
    expect(refused.map((r) => r.stream)).toEqual([...WRONG_TOKEN].sort());
    const streams = refused.map((r) => r.stream.replace(".", "\\.")).join(", ");
    expect(text).toMatch(
      new RegExp(`^ {2}x${total - 240} +authentication failed for project ${b}: HTTP 401\\n {8}project ${b}: ${streams};`, "m"),
    );
    // The token advice once in the whole text (it was twice in every line).
    expect(text.match(/check the token/gi)).toHaveLength(1);
    // Every configured stream of every configured project: a's and b's unsynced ones, all of c's.
    expect(text).toContain(`project ${a} (3 of 5 streams never run)`);
    expect(text).toContain(`project ${c} (5 of 5 streams never run)`);
    expect(text).toMatch(/^ {2}stat\.httpc\s+never run\s/m);
    expect(text).not.toContain("wrong-T0KEN-x9");
  });

  it("--json says the same: the total, the groups, the streams that never ran", async () => {
    const [a, , c] = h.pcodes;
    const run = await runCli(["status", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as StatusJson;
    const text = (await runCli(["status"], env)).stdout;
    expect(text).toContain(`failed windows: ${json.failed.total} `);
    expect(json.failed.total).toBe(json.streams.reduce((sum, s) => sum + s.failedWindows, 0));
    expect(json.failed.groups.map((g) => g.windows)).toEqual([240, json.failed.total - 240]);
    const groupLines = text.split("\n").flatMap((l) => {
      const m = /^ {2}x(\d+) +(.*)$/.exec(l);
      return m ? [{ windows: Number(m[1]), error: m[2] }] : [];
    });
    expect(groupLines).toEqual(json.failed.groups.map((g) => ({ windows: g.windows, error: g.error })));
    expect(json.failed.groups[1]!.advice).toMatch(/^check the token of project/);
    const never = json.streams.filter((s) => s.neverRun).map((s) => `${s.pcode}/${s.stream}`);
    // a: three streams; b: those its refused token stopped before they began; c: all five.
    const started = await h.sql<{ n: number }[]>`SELECT count(DISTINCT (stream, pcode))::int AS n FROM sync_windows`;
    expect(never).toHaveLength(3 * CONFIGURED.length - started[0]!.n);
    expect(never).toContain(`${a}/stat.remote`);
    expect(never).toContain(`${c}/stat.transaction`);
  });
});
