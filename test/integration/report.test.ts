// The report (issue 11): after sandbox backfills with a hole, failing windows and truncated ones,
// its figures equal the ledger, its heat map shows each of them, no token reaches it, and the page
// opens in headless Chromium at 1280 px with no console error, no request, and something drawn.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeReport } from "../../src/report/make-report.ts";
import type { ReportModel } from "../../src/report/model.ts";
import { renderHtml } from "../../src/report/render-html.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { CHROMIUM, openInChromium, WARNING_FILLS } from "../support/chromium.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 0, 10, 0, 0);
/** The configuration's default: a sync stops at now - 10 min. */
const SETTLE = 10 * 60_000;
const FROM = Date.UTC(2026, 0, 8);
const STREAMS = ["stat.transaction", "stat.sql", "range.exception", "series.thread_count", "visitors.d"];
// Hourly streams have no window in [FROM + 10 h, FROM + 14 h); stat.sql fails after it.
const HOLE = { from: FROM + 10 * HOUR, to: FROM + 14 * HOUR };

let h: EngineHarness;
let dir: string;
let model: ReportModel;
let html: string;
let tokens: string[];

beforeAll(async () => {
  // Record cap 300 with 400-key burst cubes: one 5-minute window a day is truncated.
  h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 400, projects: 2 });
  dir = await mkdtemp(join(tmpdir(), "apm-report-"));
  tokens = [h.sandbox.accountToken, ...h.sandbox.projects.map((p) => p.token)];
  await h.run({ command: "backfill", mode: { kind: "backfill", from: FROM, to: HOLE.from }, streams: STREAMS });
  // stat.sql's path is configurable: a path the server answers 404 fails every window, and one
  // that holds a token checks that no error text carries it into the report.
  const config = join(dir, "config.json");
  await writeFile(config, JSON.stringify({ overrides: { "stat.sql": { path: `/open/api/v2/stat/${tokens[1]}` } } }));
  await h.run(
    { command: "backfill", mode: { kind: "backfill", from: HOLE.to, to: FROM + 2 * DAY }, streams: STREAMS },
    { APM_CONFIG: config },
  );
  model = await makeReport(h.sql, { from: null, to: null, projects: null, now: h.now(), settleMs: SETTLE });
  html = await renderHtml(model);
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Window counts and rows per stream and project, straight from the ledger. */
async function ledgerCounts() {
  return h.sql<{ stream: string; pcode: number; done: number; truncated: number; failed: number; pruned: number; rows: number }[]>`
    SELECT stream, pcode::float8 AS pcode, count(*) FILTER (WHERE status = 'done')::int AS done,
      count(*) FILTER (WHERE status = 'truncated')::int AS truncated, count(*) FILTER (WHERE status = 'failed')::int AS failed,
      count(*) FILTER (WHERE status = 'pruned')::int AS pruned, sum(rows_written)::float8 AS rows
    FROM sync_windows GROUP BY stream, pcode ORDER BY pcode, stream`;
}

const countsOf = (m: ReportModel) => m.streams.map((s) => ({ stream: s.stream, pcode: s.pcode, ...s.windows, rows: s.rows }));

describe("apm-sync report", () => {
  it("counts every window of the ledger, by status, and its rows", async () => {
    const ledger = await ledgerCounts();
    expect(ledger.some((l) => l.failed > 0) && ledger.some((l) => l.truncated > 0)).toBe(true);
    expect(countsOf(model)).toEqual([...ledger]);
    expect(model.failedWindows.length).toBe(ledger.reduce((a, l) => a + l.failed, 0));
    expect(model.truncatedWindows.length).toBe(ledger.reduce((a, l) => a + l.truncated, 0));
  });

  it("colours the hole missing, the failing hours failed, the cut hours truncated", async () => {
    const pcode = h.pcodes[0]!;
    const cell = (stream: string, at: number) =>
      model.coverage.find((c) => c.stream === stream && c.pcode === pcode && Date.parse(c.bucketStart) === at);
    expect(model.range.bucket).toBe("hour");
    expect(cell("stat.transaction", FROM + HOUR)).toMatchObject({ state: "done", done: 1, missing: 0 });
    expect(cell("stat.transaction", HOLE.from + HOUR)).toMatchObject({ state: "missing", missing: 1 });
    expect(cell("stat.sql", HOLE.to + HOUR)).toMatchObject({ state: "failed", failed: 1 });
    // The daily series window spans the hole: fetched whole.
    expect(cell("series.thread_count", HOLE.from + HOUR)).toMatchObject({ state: "done" });
    const cut = model.truncatedWindows.find((t) => t.pcode === pcode && t.stream === "stat.transaction");
    expect(cut?.expected).toBeGreaterThan(cut?.fetched ?? Infinity);
    const hour = Math.floor(Date.parse(cut!.windowStart) / HOUR) * HOUR;
    expect(cell("stat.transaction", hour)?.state).toBe("truncated");
    for (const c of model.coverage) expect(c.done + c.truncated + c.failed + c.pruned + c.missing).toBeCloseTo(1, 3);
  });

  it("the CLI writes the page and the JSON with the same counts, and no token in either", async () => {
    const env = cliEnv({ baseUrl: "http://unused.invalid", databaseUrl: h.db.url, projects: h.sandbox.projects, accountToken: tokens[0] });
    const json = await runCli(["report", "--json"], env);
    expect(json.code, json.stderr).toBe(0);
    expect(countsOf(JSON.parse(json.stdout) as ReportModel)).toEqual([...(await ledgerCounts())]);
    const out = join(dir, "report.html");
    const page = await runCli(["report", "--out", out], env);
    expect(page.code, page.stderr).toBe(0);
    expect(page.stdout.trim()).toBe(out);
    const written = await readFile(out, "utf8");
    expect(written).toContain("Failed windows");
    // The token was in the failing path: the error texts carry it masked, so the check below bites.
    expect(model.failedWindows.length).toBeGreaterThan(0);
    for (const f of model.failedWindows) expect(f.error).toContain("/open/api/v2/stat/***");
    for (const text of [json.stdout, written, html, JSON.stringify(model)]) {
      for (const token of tokens) expect(text.includes(token), `token ${token.slice(0, 8)}... in the report`).toBe(false);
    }
  });

  it("is one static page: no script, no stylesheet or image to fetch, every chart inline", () => {
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    // Coverage for each project, then top services, error rate, visitors, rows per table: each
    // drawn twice, for a wide page and for a phone.
    expect(html.match(/<svg /g)?.length).toBe(2 * (h.pcodes.length + 4));
    expect(html.match(/<div class="narrow"><svg /g)?.length).toBe(h.pcodes.length + 4);
  });

  it.skipIf(!existsSync(CHROMIUM))(
    `opens in headless Chromium at 1280 px: no console error, no request, not blank${existsSync(CHROMIUM) ? "" : ` (SKIPPED: no ${CHROMIUM}; apt-get install chromium)`}`,
    async () => {
      const file = join(dir, "report-browser.html");
      await writeFile(file, html);
      const seen = await openInChromium(file, join(dir, "report-1280.png"));
      expect(seen.consoleErrors).toEqual([]);
      expect(seen.requests).toEqual([]);
      // Blank would be one colour; the heat map alone paints a large share of the first screen.
      expect(seen.inkShare).toBeGreaterThan(0.1);
      expect(seen.colours).toBeGreaterThan(20);
      expect(seen.overlappingLabels).toEqual([]);
      expect(seen.curvedLines).toBe(0);
      // The hole, the failing and the cut hours are in warning colours, and so are their tiles.
      for (const fill of WARNING_FILLS.slice(1))
        expect(
          seen.warnings.some((w) => w.endsWith(`fill ${fill}`)),
          fill,
        ).toBe(true);
      expect(seen.warnings.filter((w) => w.startsWith("tile ")).length).toBeGreaterThanOrEqual(2);
    },
    60_000,
  );
});

if (!existsSync(CHROMIUM)) process.stderr.write(`report.test: no ${CHROMIUM}, the browser test is skipped (apt-get install chromium)\n`);
