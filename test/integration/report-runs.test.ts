// The report's last runs say what each run did and why it did not end ok. A run killed mid-way
// stores no counts (it never finishes): it showed 0 windows and 0 rows though it had committed
// windows; now its counts are the windows it committed, from the ledger. A run that failed
// because the server could not be reached said "failed" and nothing else; now the reason is
// stored with it and shown. Both runs are the real CLI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeReport } from "../../src/report/make-report.ts";
import type { ReportModel } from "../../src/report/model.ts";
import { renderHtml } from "../../src/report/render-html.ts";
import { cliEnv, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { advisoryLocksHeld, DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";
import { unusedPort } from "../support/http-server.ts";

const NOW = Date.UTC(2026, 0, 10);
const FROM = NOW - 2 * DAY;
const STREAMS = "stat.transaction,stat.sql,range.exception";
let h: EngineHarness;
let model: ReportModel;
let html: string;
let port: number;

const env = (baseUrl: string) =>
  cliEnv({ baseUrl, databaseUrl: h.db.url, projects: h.sandbox.projects, accountToken: h.sandbox.accountToken });

async function committed(): Promise<number> {
  const [r] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_windows`;
  return r!.n;
}

/** A backfill killed with SIGKILL once it has committed some windows (on the database's word). */
async function killedBackfill(): Promise<void> {
  const child = spawnCli(
    ["backfill", "--from", new Date(FROM).toISOString(), "--to", new Date(NOW).toISOString(), "--streams", STREAMS],
    env(h.sandbox.url),
    { timeoutMs: 300_000 },
  );
  let windows = 0;
  const poll = setInterval(() => void committed().then((n) => (windows = n)), 20);
  const reached = await waitUntil(child, () => windows >= 5);
  clearInterval(poll);
  const exit = await child.kill("SIGKILL");
  expect({ reached, signal: exit.signal }, exit.stderr.slice(-2000)).toEqual({ reached: "ready", signal: "SIGKILL" });
  // Its session is gone once its advisory locks are: the report then calls the run interrupted.
  const until = Date.now() + 30_000;
  while ((await advisoryLocksHeld(h.sql)) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(await advisoryLocksHeld(h.sql)).toBe(0);
}

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
  port = await unusedPort();
  const unreachable = await runCli(
    ["sync"],
    { ...env(`http://127.0.0.1:${port}`), APM_START: "1d", APM_STREAMS: STREAMS },
    { timeoutMs: 300_000 },
  );
  expect(unreachable.code, unreachable.stderr).toBe(1);
  await killedBackfill();
  model = await makeReport(h.sql, { from: null, to: null, projects: null, now: NOW + HOUR, settleMs: 10 * 60_000 });
  html = await renderHtml(model);
}, 600_000);

afterAll(async () => h?.close());

describe("the report's last runs", () => {
  it("an interrupted run counts the windows and rows it committed, from the ledger", async () => {
    const killed = model.runs.find((r) => r.command === "backfill")!;
    const [ledger] = await h.sql<{ windows: number; rows: number; failed: number; truncated: number }[]>`
      SELECT count(*)::float8 AS windows, sum(rows_written)::float8 AS rows, count(*) FILTER (WHERE status = 'failed')::float8 AS failed,
        count(*) FILTER (WHERE status = 'truncated')::float8 AS truncated
      FROM sync_windows WHERE run_id = ${killed.id}`;
    expect(ledger!.windows).toBeGreaterThanOrEqual(5);
    expect(ledger!.rows).toBeGreaterThan(0);
    expect(killed).toMatchObject({ status: "interrupted", countsFrom: "ledger", ...ledger });
    expect(killed.reason).toMatch(/stopped without finishing/);
  });

  it("a run that could not reach the server says so, and the page shows it", () => {
    const failed = model.runs.find((r) => r.command === "sync");
    expect(failed, JSON.stringify(model.runs)).toBeDefined();
    expect(failed).toMatchObject({ status: "failed", windows: 0, rows: 0 });
    expect(failed!.reason).toContain(`http://127.0.0.1:${port}`);
    expect(failed!.reason).toMatch(/cannot reach/);
    const why = html.split("\n").find((l) => l.includes('<ul class="why">'));
    expect(why).toContain(`<li><b>#${failed!.id} <span class="status-failed">failed</span></b>: `);
    expect(why).toMatch(/failed<\/span><\/b>: [^<]*cannot reach/);
    // The interrupted run's counts are marked as the ledger's, and the mark is explained.
    expect(html).toContain("† The run stored no counts");
  });
});
