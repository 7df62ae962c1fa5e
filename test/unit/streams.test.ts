// `apm-sync streams`: every spec operation is listed, with its token, limit and target.
import { describe, expect, it } from "vitest";
import { formatLimit, run, type StreamLine } from "../../jobs/streams.ts";
import { DAY, HOUR } from "../../src/catalogue/types.ts";

async function capture(opts: Record<string, unknown>): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await run(opts, {}, { write: (chunk: string) => (text += chunk) });
  return { code, text };
}

describe("apm-sync streams", () => {
  it("--json lists every spec operation: 26 series, 11 scalars, 5 stats, ...", async () => {
    const { code, text } = await capture({ json: true });
    expect(code).toBe(0);
    const lines = JSON.parse(text) as StreamLine[];
    const count = (prefix: string) => lines.filter((l) => l.id.startsWith(prefix) && l.inSpec).length;
    // 7 metric types x 4 forms, minus tx_caller's two averaged forms.
    expect(count("series.")).toBe(26);
    expect(lines.some((l) => l.id === "series.tx_caller.avg")).toBe(false);
    expect(count("scalar.")).toBe(11);
    expect(count("stat.")).toBe(5);
    expect(count("account.")).toBe(5);
    expect(count("range.")).toBe(8);
    expect(count("visitors.")).toBe(4);
    expect(count("calls.")).toBe(2);
    expect(count("project.")).toBe(6);
    expect(lines.filter((l) => l.inSpec)).toHaveLength(26 + 11 + 5 + 5 + 8 + 4 + 2 + 6);
    // Averages over a chosen agent list have no key in metric_points: client operations, not streams.
    const notStreams = lines.filter((x) => x.inSpec && x.table === "-").map((x) => x.id);
    const metrics = ["apdex", "thread_count", "thread_daemon", "thread_peak_count", "threadpool_active", "threadpool_queue"];
    expect(notStreams.sort()).toEqual(metrics.map((m) => `series.${m}.avg.oids`).sort());
    for (const l of lines.filter((x) => !x.inSpec)) expect([l.kind, l.table, l.enabledByDefault]).toEqual(["-", "-", null]);
  });

  it("--json carries token, limit and target of an entry", async () => {
    const lines = JSON.parse((await capture({ json: true })).text) as StreamLine[];
    expect(lines.find((l) => l.id === "range.heap_use.avg")).toMatchObject({
      method: "GET",
      path: "/open/api/json/heap_use/{stime}/{etime}/avg",
      token: "project|account",
      limit: "1h",
      windowLimitMs: HOUR,
      kind: "aggregate",
      table: "heap_use",
      enabledByDefault: true,
    });
    expect(lines.find((l) => l.id === "visitors.m")).toMatchObject({ limit: "365d", table: "visitors_monthly", token: "project" });
    expect(lines.find((l) => l.id === "stat.transaction")).toMatchObject({ method: "POST", limit: "1d", table: "stat_transaction" });
  });

  it("prints an aligned table", async () => {
    const { code, text } = await capture({});
    expect(code).toBe(0);
    const [streams, others] = text.split(/\n\d+ streams\. Not synced .*\n/) as [string, string];
    const rows = streams.split("\n").filter((r) => r.length > 0);
    expect(rows[0]).toMatch(/^OPERATION\s+ENDPOINT\s+TOKEN\s+LIMIT\s+KIND\s+TABLE\s+DEFAULT$/);
    expect(rows).toHaveLength(1 + 61);
    const tableCol = rows[0]!.indexOf("TABLE");
    const heap = rows.find((r) => r.startsWith("range.heap_use.max "))!;
    expect(heap.slice(tableCol).split(/\s+/)[0]).toBe("heap_use");
    expect(heap).toMatch(/project\|account\s+1h\s+aggregate/);
    expect(rows.find((r) => r.startsWith("series.apdex.oids "))).toMatch(/\soff$/);
    // What `sync --streams` refuses is listed apart, with the reason.
    expect(rows.some((r) => r.startsWith("extra."))).toBe(false);
    expect(others).toMatch(/^extra\.mxql\.text\s+POST \/open\/api\/flush\/mxql\/text\s+project\s+-\s+docs-only operation/m);
    expect(others).toMatch(/^series\.apdex\.avg\.oids\s.*client only/m);
  });

  it("formats limits", () => {
    expect([formatLimit(HOUR), formatLimit(DAY), formatLimit(31 * DAY), formatLimit(365 * DAY), formatLimit(null)]).toEqual([
      "1h",
      "1d",
      "31d",
      "365d",
      "-",
    ]);
    expect(formatLimit(5 * 60_000)).toBe("5m");
  });
});
