// The report's pure parts: its range, the coverage shares and states of the heat map, the page's
// escaping of database text; long lists, run reasons, axis units and freshness per project.
import { describe, expect, it } from "vitest";
import { buildReport, cellState, runReason } from "../../src/report/build-report.ts";
import { topServicesSpec } from "../../src/report/charts.ts";
import { esc, listTable, windowText } from "../../src/report/html.ts";
import { reportRange } from "../../src/report/range.ts";
import type { ReportInputs } from "../../src/report/read-report.ts";
import type { CoverageRow } from "../../src/report/reads/readCoverage.ts";
import type { StreamSummary } from "../../src/report/reads/readStreamSummary.ts";
import { freshness } from "../../src/report/render-tables.ts";
import { unitOf } from "../../src/report/units.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 8);

function summary(stream: string, over: Partial<StreamSummary> = {}): StreamSummary {
  return {
    stream,
    pcode: 1001,
    done: 0,
    truncated: 0,
    failed: 0,
    pruned: 0,
    rows: 0,
    quarantined: 0,
    partitions: 1,
    windowed: true,
    watermark: null,
    lastWindowEnd: null,
    firstWindowStart: null,
    ...over,
  };
}

function inputs(streams: StreamSummary[], coverage: CoverageRow[]): ReportInputs {
  const none = { rows: [], total: 0 };
  return {
    streams,
    coverage,
    runs: [],
    topServices: [],
    errorRate: [],
    visitors: [],
    rows: [],
    failed: none,
    truncated: none,
    quarantine: none,
    restatements: none,
    lastVerification: null,
    archives: [],
  };
}

describe("reportRange", () => {
  it("hours up to 3 days, days beyond; bounds widened to whole buckets", () => {
    const span = { from: T0 + 5 * 60_000, to: T0 + 2 * DAY + 30 * 60_000 };
    expect(reportRange({ from: null, to: null }, span, T0 + 10 * DAY)).toEqual({
      from: T0,
      to: T0 + 2 * DAY + HOUR,
      bucket: "hour",
      bucketMs: HOUR,
    });
    const long = reportRange({ from: T0 - 10 * DAY, to: T0 + HOUR }, span, T0 + 10 * DAY);
    expect(long).toEqual({ from: T0 - 10 * DAY, to: T0 + DAY, bucket: "day", bucketMs: DAY });
  });

  it("ends after now when the ledger reaches into the future, and is the last 7 days on an empty ledger", () => {
    const now = T0 + 12 * HOUR + 1;
    expect(reportRange({ from: null, to: null }, { from: T0, to: T0 + 7 * DAY }, now).to).toBe(T0 + 13 * HOUR);
    expect(reportRange({ from: null, to: null }, { from: null, to: null }, T0 + 7 * DAY)).toMatchObject({ from: T0, bucket: "day" });
  });

  it("refuses --to before --from", () => {
    expect(() => reportRange({ from: T0, to: T0 }, { from: null, to: null }, T0)).toThrow(/--to must be after --from/);
  });

  it("takes a ledger of captures at one instant (a run stopped early) as its hour, not as an empty range", () => {
    const at = T0 + 90 * 60_000;
    expect(reportRange({ from: null, to: null }, { from: at, to: at }, at + 1000)).toEqual({
      from: T0 + HOUR,
      to: T0 + 2 * HOUR,
      bucket: "hour",
      bucketMs: HOUR,
    });
  });
});

describe("buildReport coverage", () => {
  const range = { from: T0, to: T0 + 3 * HOUR, bucket: "hour" as const, bucketMs: HOUR };
  const row = (stream: string, bucket: number, status: CoverageRow["status"], coveredMs: number): CoverageRow => ({
    stream,
    pcode: 1001,
    status,
    bucket,
    coveredMs,
  });

  it("shares of each bucket by status, the rest missing, and the worst state as its colour", () => {
    const model = buildReport(
      inputs(
        [summary("stat.sql")],
        [row("stat.sql", 0, "done", HOUR), row("stat.sql", 1, "done", HOUR / 2), row("stat.sql", 1, "truncated", HOUR / 4)],
      ),
      { now: T0 + 10 * HOUR, due: T0 + 10 * HOUR, range, projects: null },
    );
    expect(model.coverage.map(({ done, truncated, failed, missing, state }) => ({ done, truncated, failed, missing, state }))).toEqual([
      { done: 1, truncated: 0, failed: 0, missing: 0, state: "done" },
      { done: 0.5, truncated: 0.25, failed: 0, missing: 0.25, state: "truncated" },
      { done: 0, truncated: 0, failed: 0, missing: 1, state: "missing" },
    ]);
    expect(model.streams[0]!.coverage).toEqual({ done: 0.5, truncated: 0.0833, failed: 0, pruned: 0, missing: 0.4167 });
  });

  it("time whose rows prune dropped is pruned, not missing; a bucket also partly missing says so", () => {
    const model = buildReport(
      inputs(
        [summary("stat.sql", { firstWindowStart: T0 })],
        [row("stat.sql", 0, "pruned", HOUR), row("stat.sql", 1, "pruned", HOUR / 2), row("stat.sql", 2, "done", HOUR)],
      ),
      { now: T0 + 3 * HOUR, due: T0 + 3 * HOUR, range, projects: null },
    );
    expect(model.coverage.map(({ pruned, missing, state }) => ({ pruned, missing, state }))).toEqual([
      { pruned: 1, missing: 0, state: "pruned" },
      { pruned: 0.5, missing: 0.5, state: "partly missing" },
      { pruned: 0, missing: 0, state: "done" },
    ]);
  });

  it("a stream with two partitions needs both to cover a bucket; the current bucket counts up to now", () => {
    const model = buildReport(
      inputs([summary("range.httpc.filtered", { partitions: 2 })], [row("range.httpc.filtered", 0, "done", HOUR)]),
      { now: T0 + HOUR + HOUR / 2, due: T0 + HOUR + HOUR / 2, range, projects: null },
    );
    expect(model.coverage.map((c) => [c.bucketStart, c.done, c.state])).toEqual([
      [new Date(T0).toISOString(), 0.5, "partly missing"],
      [new Date(T0 + HOUR).toISOString(), 0, "missing"],
    ]);
  });

  it("captures have no cells and no coverage; lag runs from the watermark to now", () => {
    const now = T0 + 2 * HOUR;
    const model = buildReport(inputs([summary("project.spot", { windowed: false, watermark: T0 + HOUR })], []), {
      now,
      due: now,
      range,
      projects: [1001],
    });
    expect(model.coverage).toEqual([]);
    expect(model.streams[0]).toMatchObject({ coverage: null, lagMs: HOUR, watermark: new Date(T0 + HOUR).toISOString() });
    expect(model.range.projects).toEqual([1001]);
  });

  it("time before a stream's first window is not synced yet and time after now - settle not due: neither is missing", () => {
    // A sync from 01:20: the hourly stream's first window starts at 01:00, and at 02:40 with a
    // 10-minute settle it reaches 02:30.
    const now = T0 + 2 * HOUR + 40 * 60_000;
    const due = T0 + 2 * HOUR + 30 * 60_000;
    const hourly = summary("stat.sql", { firstWindowStart: T0 + HOUR });
    const model = buildReport(inputs([hourly], [row("stat.sql", 1, "done", HOUR), row("stat.sql", 2, "done", 30 * 60_000)]), {
      now,
      due,
      range,
      projects: null,
    });
    expect(model.coverage.map((c) => [c.bucketStart, c.done, c.missing, c.state])).toEqual([
      [new Date(T0 + HOUR).toISOString(), 1, 0, "done"],
      [new Date(T0 + 2 * HOUR).toISOString(), 1, 0, "done"],
    ]);
    expect(model.streams[0]!.coverage).toEqual({ done: 1, truncated: 0, failed: 0, pruned: 0, missing: 0 });
    // The old behaviour: every bucket of the range up to now, the first one all missing.
    const old = buildReport(inputs([summary("stat.sql")], [row("stat.sql", 1, "done", HOUR), row("stat.sql", 2, "done", 30 * 60_000)]), {
      now,
      due: now,
      range,
      projects: null,
    });
    expect(old.coverage.map((c) => c.state)).toEqual(["missing", "done", "partly missing"]);
  });

  it("failed wins over truncated, truncated over missing, missing over pruned", () => {
    expect(cellState({ done: 0.5, truncated: 0.25, failed: 0.25, pruned: 0, missing: 0 })).toBe("failed");
    expect(cellState({ done: 0.5, truncated: 0.25, failed: 0, pruned: 0, missing: 0.25 })).toBe("truncated");
    expect(cellState({ done: 0.99, truncated: 0, failed: 0, pruned: 0, missing: 0.01 })).toBe("partly missing");
    expect(cellState({ done: 0.5, truncated: 0, failed: 0, pruned: 0.5, missing: 0 })).toBe("pruned");
  });
});

describe("report HTML helpers", () => {
  it("escapes text from the database", () => {
    expect(esc(`<script>alert("x") & 'y'</script>`)).toBe("&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
  });

  it("prints a window's end date only when it differs", () => {
    expect(windowText("2026-01-08T10:00:00.000Z", "2026-01-08T10:05:00.000Z")).toBe("2026-01-08 10:00Z .. 10:05Z");
    expect(windowText("2026-01-08T00:00:00.000Z", "2026-01-09T00:00:00.000Z")).toBe("2026-01-08 00:00Z .. 2026-01-09 00:00Z");
  });
});

describe("the report at a month and on a phone", () => {
  const cut = (total: number, given: number) =>
    listTable(
      ["stream"],
      Array.from({ length: given }, (_, i) => [`s${i}`]),
      "None.",
      { what: "truncated windows", total, shown: 100, rest: "<code>SELECT</code>" },
    );

  it("a long list says how many there are, shows the first 100 and folds the rest; beyond the model it says where they are", () => {
    const page = cut(910, 910);
    expect(page).toContain("910 truncated windows; the first 100 below, the next 810 folded under them.");
    expect(page.split("<details")[0]!.match(/<tr>/g)?.length).toBe(101);
    expect(page.split("<details")[1]!.match(/<tr>/g)?.length).toBe(811);
    const beyond = cut(5000, 1000);
    expect(beyond).toContain(
      "5,000 truncated windows; the first 100 below, the next 900 folded under them; the other 4,000 are not in this page: <code>SELECT</code>.",
    );
    expect(cut(3, 3)).toContain('<p class="count">3 truncated windows.</p>');
  });

  it("a run that did not end ok says why: what it stored, else its failed windows, else what its status means", () => {
    expect(runReason("ok", null, null)).toBeNull();
    expect(runReason("failed", "cannot reach http://x", { text: "500", windows: 2 })).toBe("cannot reach http://x");
    expect(runReason("partial", null, { text: "HTTP 500 from /stat", windows: 3 })).toBe("3 windows failed: HTTP 500 from /stat");
    expect(runReason("interrupted", null, null)).toMatch(/stopped without finishing/);
    expect(runReason("failed", null, null)).toMatch(/no reason recorded/);
  });

  it("the top services' axis gives time_sum's unit as the data dictionary does: not documented, and nothing divided", () => {
    const model = buildReport(
      {
        ...inputs([summary("stat.transaction")], []),
        topServices: [{ pcode: 1001, service: "/a", timeSum: 123_456, count: 10, error: 0 }],
      },
      { now: T0, due: T0, range: { from: T0 - DAY, to: T0, bucket: "hour", bucketMs: HOUR }, projects: null },
    );
    const spec = topServicesSpec(model) as unknown as { data: { values: { timeSum: number }[] }; encoding: { x: { title: string } } };
    expect(unitOf("stat_transaction", "time_sum")).toBe("not documented");
    expect(spec.encoding.x.title).toBe("total time_sum, unit not documented");
    expect(spec.data.values[0]!.timeSum).toBe(123_456);
  });

  it("freshness is one group per project, open only where something needs a look", async () => {
    const range = { from: T0, to: T0 + HOUR, bucket: "hour" as const, bucketMs: HOUR };
    const streams = [
      summary("stat.sql", { pcode: 1001, firstWindowStart: T0 }),
      summary("stat.sql", { pcode: 1002, firstWindowStart: T0, failed: 1 }),
      summary("stat.transaction", { pcode: 1002, firstWindowStart: T0 }),
    ];
    const rows: CoverageRow[] = [
      { stream: "stat.sql", pcode: 1001, status: "done", bucket: 0, coveredMs: HOUR },
      { stream: "stat.sql", pcode: 1002, status: "failed", bucket: 0, coveredMs: HOUR },
      { stream: "stat.transaction", pcode: 1002, status: "done", bucket: 0, coveredMs: HOUR },
    ];
    const page = freshness(buildReport(inputs(streams, rows), { now: T0 + HOUR, due: T0 + HOUR, range, projects: null }));
    const groups = page.match(/<details class="group"[^>]*><summary>.*<\/summary>/g) ?? [];
    expect(groups).toEqual([
      `<details class="group"><summary><b>Project 1001</b>: 1 stream; all complete</summary>`,
      `<details class="group" open><summary><b>Project 1002</b>: 2 streams; 1 with failed windows</summary>`,
    ]);
  });
});
