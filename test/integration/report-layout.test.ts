// The report as a newcomer sees it (issue 19 point 8), after real runs against the sandbox: a
// complete 2-day sync (hourly streams start at now - 2 d, daily series at that day's midnight)
// has nothing missing and no warning colour anywhere; 7 and 90 days of data have readable axes.
// Each page opens in headless Chromium at 1280, 800 and 390 px and as printed: no axis label drawn
// over another or smaller than 8 px (measured from the laid-out text boxes), no table cut by a box or wider than the
// printed page, straight lines between points. Screenshots land in .scratch-report/ (git-ignored).
import { existsSync, mkdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeReport } from "../../src/report/make-report.ts";
import type { ReportModel } from "../../src/report/model.ts";
import { renderHtml } from "../../src/report/render-html.ts";
import { REPO_ROOT } from "../support/child-sync.ts";
import { CHROMIUM, openInChromium } from "../support/chromium.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

// Like the demo: a first sync at 10:40 of 2 days.
const NOW = Date.UTC(2026, 0, 10, 10, 40);
const SETTLE = 10 * 60_000;
const STREAMS = ["stat.transaction", "stat.sql", "range.exception", "series.thread_count", "visitors.d", "visitors.h"];
// 90 days of the streams the charts draw; daily windows keep the backfill short.
const LONG_STREAMS = ["stat.transaction", "series.thread_count", "visitors.d"];
const SHOTS = join(REPO_ROOT, ".scratch-report");

let clean: EngineHarness;
let long: EngineHarness;
let dir: string;
const pages = new Map<string, { model: ReportModel; file: string }>();

async function page(name: string, harness: EngineHarness, flags: { from: number | null; to: number | null }) {
  const model = await makeReport(harness.sql, { ...flags, projects: null, now: harness.now(), settleMs: SETTLE });
  const file = join(dir, `${name}.html`);
  await writeFile(file, await renderHtml(model));
  pages.set(name, { model, file });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "apm-report-layout-"));
  mkdirSync(SHOTS, { recursive: true });
  clean = await startEngineHarness({ now: NOW, projects: 2, burstKeys: 0 });
  const sync = await clean.run({ command: "sync", mode: { kind: "sync" }, streams: STREAMS }, { APM_START: "2d" });
  expect(sync.exitCode).toBe(0);
  await page("2d", clean, { from: null, to: null });

  long = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 0 });
  const config = join(dir, "grains.json");
  await writeFile(config, JSON.stringify({ grains: { "stat.transaction": "1d" } }));
  const backfill = await long.run(
    { command: "backfill", mode: { kind: "backfill", from: NOW - 90 * DAY, to: NOW }, streams: LONG_STREAMS },
    { APM_CONFIG: config },
  );
  expect(backfill.exitCode).toBe(0);
  await page("7d", long, { from: NOW - 7 * DAY, to: null });
  await page("90d", long, { from: null, to: null });
}, 600_000);

afterAll(async () => {
  await clean?.close();
  await long?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the report of a complete run", () => {
  it("spans what was synced: from the hourly streams' first window, not the daily series' midnight", () => {
    const { model } = pages.get("2d")!;
    const first = Math.min(...model.coverage.filter((c) => c.stream === "stat.transaction").map((c) => Date.parse(c.bucketStart)));
    expect(Date.parse(model.range.from)).toBe(first);
    expect(Date.parse(model.range.from)).toBe(Math.floor((NOW - 2 * DAY) / HOUR) * HOUR);
  });

  it("has nothing missing: every cell done, every stream fully covered, the tile not amber", async () => {
    const { model, file } = pages.get("2d")!;
    expect(model.coverage.length).toBeGreaterThan(2 * 5 * 40);
    expect(model.coverage.filter((c) => c.state !== "done")).toEqual([]);
    for (const s of model.streams) if (s.coverage) expect(s.coverage, s.stream).toMatchObject({ missing: 0, done: 1 });
    const html = await import("node:fs/promises").then((fs) => fs.readFile(file, "utf8"));
    expect(html).toContain('<div class="tile ok"><div class="value">0 %</div><div class="label">of the time not in the ledger</div>');
  });
});

const VIEWS = [
  { name: "1280", viewport: { width: 1280, height: 900 }, media: "screen" },
  { name: "800", viewport: { width: 800, height: 900 }, media: "screen" },
  // A phone: the charts' phone drawings, their text at full size (it was scaled to 3-4 px).
  { name: "390", viewport: { width: 390, height: 844 }, media: "screen" },
  // An A4 page's printable width at 96 dpi.
  { name: "print", viewport: { width: 718, height: 1000 }, media: "print" },
] as const;

describe.skipIf(!existsSync(CHROMIUM))("in Chromium at 1280 px, 800 px, 390 px and printed", () => {
  for (const name of ["2d", "7d", "90d"])
    for (const view of VIEWS)
      it(`${name} at ${view.name}: no label over another or too small to read, no warning colour, tables whole, straight lines`, async () => {
        const { file } = pages.get(name)!;
        const seen = await openInChromium(file, join(SHOTS, `report-${name}-${view.name}.png`), { ...view, fullPage: true });
        expect(seen.consoleErrors).toEqual([]);
        expect(seen.requests).toEqual([]);
        expect(seen.overlappingLabels).toEqual([]);
        // On screen; printed, the wide charts shrink to the A4 width (labels ~7 px, as before the phone drawings).
        if (view.media === "screen") expect(seen.smallText).toEqual([]);
        expect(seen.warnings).toEqual([]);
        // On a narrow screen a wide table may scroll sideways; cut in height, never; printed, neither.
        const cut = view.media === "print" ? seen.cutTables : seen.cutTables.filter((c) => c.includes(" cut at "));
        expect(cut).toEqual([]);
        expect(seen.curvedLines).toBe(0);
        expect(seen.inkShare).toBeGreaterThan(0.05);
      }, 60_000);
});

if (!existsSync(CHROMIUM))
  process.stderr.write(`report-layout.test: no ${CHROMIUM}, the browser checks are skipped (apt-get install chromium)\n`);
