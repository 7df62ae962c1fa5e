// `apm-sync check` as a new user meets it: the real CLI against the sandbox under several server
// profiles (the default strict one unless a test names another). It must write nothing (no
// database is opened: the working directory stays empty) and never print a token.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { selectOperations } from "../../src/engine/targets.ts";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.ts";
import { type ChildExit, runCli } from "../support/child-sync.ts";

interface CheckJson {
  ok: boolean;
  serverClockOffsetMs: number | null;
  headers: { token: string; pcode: string };
  operations: {
    id: string;
    pcode: number | null;
    status: string;
    token: string | null;
    httpStatus: number | null;
    records: number | null;
    ms: number | null;
    message: string | null;
  }[];
  advice: string[];
}

const HOUR = 3_600_000;
const sandboxes: Sandbox[] = [];
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.stop()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function sandbox(opts: SandboxOptions): Promise<Sandbox> {
  const s = await startSandbox({ burstKeys: 0, ...opts });
  sandboxes.push(s);
  return s;
}

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "apm-check-"));
  dirs.push(d);
  return d;
}

/** Runs `check` in an empty directory; asserts that no token leaked and nothing was written there. */
async function check(s: Sandbox, args: string[], env: Record<string, string>): Promise<ChildExit & { json: CheckJson | null }> {
  const cwd = tmp();
  const run = await runCli(["check", ...args], { APM_BASE_URL: s.url, APM_LOG_FORMAT: "plain", APM_RPS: "1000", ...env }, { cwd });
  for (const token of [s.accountToken, ...s.projects.map((p) => p.token), "wrong-T0KEN-x9"]) {
    expect(run.stdout).not.toContain(token);
    expect(run.stderr).not.toContain(token);
  }
  expect(readdirSync(cwd)).toEqual([]);
  return { ...run, json: args.includes("--json") ? (JSON.parse(run.stdout) as CheckJson) : null };
}

/** Latencies shown for failed probes: none (their time went to retries and backoff, not to an answer). */
const failedMs = (report: CheckJson) => report.operations.filter((r) => r.status !== "ok" && r.ms !== null).map((r) => r.ms);

const projectsEnv = (s: Sandbox, n = s.projects.length) =>
  s.projects
    .slice(0, n)
    .map((p) => `${p.pcode}:${p.token}`)
    .join(",");
// The sandbox masks every group key, as the hosted service does: those operations cannot be probed.
const GROUP_FAN_OUT = new Set(["account.group_members", "account.group_projects"]);

describe("apm-sync check", () => {
  it("a healthy server: every default operation of every project ok, exit 0", async () => {
    const s = await sandbox({ projects: 2 });
    const run = await check(s, ["--json"], { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: projectsEnv(s) });
    expect(run.code, run.stderr).toBe(0);
    const report = run.json!;
    expect(report.ok).toBe(true);
    expect(report.headers).toEqual({ token: "x-service-token", pcode: "x-service-pcode" });
    const defaults = selectOperations(null);
    const accountIds = defaults.filter((op) => !op.sendsPcode).map((op) => op.id);
    const projectIds = defaults.filter((op) => op.sendsPcode).map((op) => op.id);
    expect(report.operations.filter((r) => r.pcode === null).map((r) => r.id)).toEqual(accountIds);
    for (const p of s.projects) expect(report.operations.filter((r) => r.pcode === p.pcode).map((r) => r.id)).toEqual(projectIds);
    for (const r of report.operations) {
      if (GROUP_FAN_OUT.has(r.id)) {
        expect(r).toMatchObject({ status: "skipped", message: expect.stringContaining("is masked by the server") });
        continue;
      }
      expect(r, r.message ?? "").toMatchObject({ status: "ok", httpStatus: 200 });
      expect(r.token).toBe(r.pcode === null ? "account" : "project");
      expect(r.records).toBeGreaterThanOrEqual(0);
      expect(r.ms).toBeGreaterThanOrEqual(0);
    }
    expect(Math.abs(report.serverClockOffsetMs!)).toBeLessThan(1000);
  });

  it("a wrong token for one project: only that project's operations are auth, exit 1; an unlisted project is skipped", async () => {
    const s = await sandbox({ projects: 3 });
    const [good, bad, unconfigured] = s.projects;
    const env = { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: `${good!.pcode}:${good!.token},${bad!.pcode}:wrong-T0KEN-x9` };
    const run = await check(s, ["--json"], env);
    expect(run.code, run.stderr).toBe(1);
    const ops = run.json!.operations;
    expect(run.json!.ok).toBe(false);
    const of = (pcode: number | null) => ops.filter((r) => r.pcode === pcode);
    expect(of(bad!.pcode).length).toBeGreaterThan(40);
    for (const r of of(bad!.pcode)) expect(r, r.id).toMatchObject({ status: "auth", token: null, httpStatus: 401 });
    for (const r of of(good!.pcode)) expect(r, r.message ?? "").toMatchObject({ status: "ok" });
    for (const r of of(null)) expect(["ok", "skipped"]).toContain(r.status);
    expect(of(unconfigured!.pcode).length).toBe(of(good!.pcode).length);
    for (const r of of(unconfigured!.pcode))
      expect(r).toMatchObject({ status: "skipped", message: `no token for project ${unconfigured!.pcode} in APM_PROJECTS` });

    // The table says it once per project and reason, not 46 times.
    const text = await check(s, [], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(new RegExp(`project ${bad!.pcode}: \\d+ operations auth: refused \\(HTTP 401\\)`));
    expect(text.stdout).toContain(`project ${unconfigured!.pcode}: ${of(good!.pcode).length} operations skipped`);
  });

  it("a server whose range and series operations take only the account token (profile rangeToken=account): the token column says so", async () => {
    const s = await sandbox({ projects: 1, profile: { rangeToken: "account" } });
    const env = { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: projectsEnv(s) };
    const run = await check(s, ["--json", "--streams", "range.exception,series.apdex,stat.sql"], env);
    expect(run.code, run.stderr).toBe(0);
    const tokens = Object.fromEntries(run.json!.operations.map((r) => [r.id, [r.status, r.token]]));
    expect(tokens).toEqual({ "range.exception": ["ok", "account"], "series.apdex": ["ok", "account"], "stat.sql": ["ok", "project"] });
  });

  it("an override to a path the server does not serve: not-found, naming the overrides key", async () => {
    const s = await sandbox({ projects: 1 });
    const config = join(tmp(), "apm-sync.json");
    writeFileSync(config, JSON.stringify({ overrides: { "stat.transaction": { method: "POST", path: "/open/api/v9/stat/transaction" } } }));
    const env = { APM_PROJECTS: projectsEnv(s), APM_CONFIG: config };
    const run = await check(s, ["--json", "--streams", "stat.transaction,stat.sql"], env);
    expect(run.code, run.stderr).toBe(1);
    const [tx, sql] = run.json!.operations;
    expect(tx).toMatchObject({ id: "stat.transaction", status: "not-found", httpStatus: 404, token: null });
    expect(tx!.message).toContain("/open/api/v9/stat/transaction answered 404");
    expect(tx!.message).toContain('set overrides["stat.transaction"] in the config file');
    expect(sql).toMatchObject({ id: "stat.sql", status: "ok" });

    // A server without the statistics at the default path: every stat operation says the same.
    s.setProfile({ statsAtDefaultPath: false });
    const text = await check(s, ["--streams", "stat"], { APM_PROJECTS: projectsEnv(s) });
    expect(text.code).toBe(1);
    for (const id of ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "stat.remote"])
      expect(text.stdout).toMatch(new RegExp(`^${id.replace(".", "\\.")}\\s+\\d+\\s+not-found .*overrides\\["${id}"\\]`, "m"));
  });

  it("a server clock 3 h behind: reported within 1 s, and the probes ask for the server's past", async () => {
    const s = await sandbox({ projects: 1, profile: { clockOffsetMs: -3 * HOUR } });
    const run = await check(s, ["--json"], { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: projectsEnv(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(Math.abs(run.json!.serverClockOffsetMs! + 3 * HOUR)).toBeLessThan(1000);
    const serverNow = Date.now() - 3 * HOUR;
    const windowed = s.requestLog.filter((e) => e.etime !== null);
    expect(windowed.length).toBeGreaterThan(20);
    for (const e of windowed) expect(e.etime!).toBeLessThanOrEqual(serverNow);

    const text = await check(s, ["--streams", "stat.transaction"], { APM_PROJECTS: projectsEnv(s) });
    expect(text.stdout).toMatch(/server clock: -3h 0m \d+\.\ds \(behind ours/);
  });

  it("ms is send to answer: at the default 20 requests/s it does not include the wait for the rate limit", async () => {
    const s = await sandbox({ projects: 1 });
    const env = { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: projectsEnv(s) };
    const median = (run: { json: CheckJson | null }) => {
      const ms = run.json!.operations.flatMap((r) => (r.status === "ok" && r.ms !== null ? [r.ms] : [])).sort((a, b) => a - b);
      expect(ms.length).toBeGreaterThan(40);
      return ms[Math.floor(ms.length / 2)]!;
    };
    const slow = await check(s, ["--json"], { ...env, APM_RPS: "20" });
    expect(slow.code, slow.stderr).toBe(0);
    // Four probes at once at 20/s wait ~200 ms each for the governor; the local sandbox answers in a few.
    expect(median(slow)).toBeLessThan(40);
    const fast = await check(s, ["--json"], env);
    expect(median(slow)).toBeLessThanOrEqual(median(fast) + 25);
    expect(failedMs(slow.json!)).toEqual([]);
  });

  it("a base URL with the operations' path in it: one note to set APM_BASE_URL to the root, not 46 to set overrides", async () => {
    const s = await sandbox({ projects: 1 });
    const env = { APM_ACCOUNT_TOKEN: s.accountToken, APM_PROJECTS: projectsEnv(s) };
    const run = await runCli(
      ["check", "--json"],
      { APM_BASE_URL: `${s.url}/open/api`, APM_LOG_FORMAT: "plain", APM_RPS: "1000", ...env },
      { cwd: tmp() },
    );
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as CheckJson;
    expect(report.advice).toEqual([
      `APM_BASE_URL has the path /open/api, which the operations' paths already begin with (requests went to /open/api/open/api/...): set APM_BASE_URL to ${s.url}`,
    ]);
    const notFound = report.operations.filter((r) => r.status === "not-found");
    expect(notFound.length).toBeGreaterThan(40);
    for (const r of notFound) expect(r.message).not.toContain("overrides");
    const text = await runCli(
      ["check"],
      { APM_BASE_URL: `${s.url}/open/api/`, APM_LOG_FORMAT: "plain", APM_RPS: "1000", ...env },
      { cwd: tmp() },
    );
    expect(text.stdout).not.toContain("overrides[");
    expect(text.stdout).toMatch(/^project \d+: \d+ operations not-found: answered 404: see the note on APM_BASE_URL below$/m);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(`=> ${report.advice[0]}`);

    // Any other path in front of them: every probe answers 404, which points at the base URL too.
    const other = await runCli(
      ["check", "--json"],
      { APM_BASE_URL: `${s.url}/apm`, APM_LOG_FORMAT: "plain", APM_RPS: "1000", ...env },
      { cwd: tmp() },
    );
    expect((JSON.parse(other.stdout) as CheckJson).advice).toEqual([
      `every operation answered 404: APM_BASE_URL is the server's root, without a path; try APM_BASE_URL=${s.url}`,
    ]);
  });

  it("a configuration or usage problem exits 2 before any request", async () => {
    const s = await sandbox({ projects: 1 });
    const noUrl = await runCli(["check"], { APM_PROJECTS: projectsEnv(s) }, { cwd: tmp() });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("APM_BASE_URL is not set");
    const badStream = await check(s, ["--streams", "stat.nope"], { APM_PROJECTS: projectsEnv(s) });
    expect(badStream.code).toBe(2);
    expect(badStream.stderr).toContain('unknown stream "stat.nope"');
    expect(s.requestLog).toEqual([]);
  });
});
