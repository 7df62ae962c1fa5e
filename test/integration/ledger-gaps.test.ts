// `ledger_gaps` and the Grafana "Gaps in the ledger" panel on it report real holes only. A
// snapshot stream records each capture as a zero-length window, and the view took the time between
// two captures for a hole: a healthy warehouse showed one per snapshot stream, project and run
// (110 after 5 runs). Here every default stream is synced several times (account token, two
// projects) and the view has nothing; a range `reset` forgets is found, in the view and the panel.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, REPO_ROOT, runCli } from "../support/child-sync.ts";
import { type EngineHarness, HOUR, MINUTE, startEngineHarness } from "../support/engine-harness.ts";
import { allPanels, expandGrafanaSql } from "../support/grafana-sql.ts";

const NOW = Date.UTC(2026, 1, 18, 12, 3);
const RUNS = 5;
const iso = (ms: number) => new Date(ms).toISOString();

let h: EngineHarness;

/** The rows of ledger_gaps, as `stream pcode kind start..end`. */
async function gaps(): Promise<string[]> {
  const rows = await h.sql<{ stream: string; pcode: number; kind: string; s: Date; e: Date }[]>`
    SELECT stream, pcode::float8 AS pcode, kind, gap_start AS s, gap_end AS e FROM ledger_gaps ORDER BY stream, pcode, gap_start`;
  return rows.map((r) => `${r.stream} ${r.pcode} ${r.kind} ${iso(r.s.getTime())}..${iso(r.e.getTime())}`);
}

/** The "Gaps in the ledger" panel's SQL, as Grafana sends it for every project. */
function panelSql(): string {
  const file = join(REPO_ROOT, "deploy", "grafana", "dashboards", "apm-sync-operations.json");
  const panel = allPanels(JSON.parse(readFileSync(file, "utf8"))).find((p) => p.title === "Gaps in the ledger");
  const target = (panel?.targets as { rawSql: string }[] | undefined)?.[0];
  if (!target) throw new Error("no 'Gaps in the ledger' panel");
  const variables = { schema: { values: [h.db.schema], multi: false }, project: { values: h.pcodes.map(String), multi: true } };
  return expandGrafanaSql(target.rawSql, { from: NOW - 2 * HOUR, to: NOW, interval: "5m", variables });
}

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2, env: { APM_START: "3h", APM_LOOKBACK: "0" } });
  // Every default stream, account and snapshots included, a run every 10 minutes.
  for (let run = 0; run < RUNS; run++) {
    h.setNow(NOW + run * 10 * MINUTE);
    const result = await h.run({ command: "sync", mode: { kind: "sync" } });
    expect(result.exitCode, h.logs.slice(-5).join("\n")).toBe(0);
  }
}, 300_000);
afterAll(() => h?.close());

describe("ledger_gaps", () => {
  it("a healthy warehouse after several runs has no gap, though its snapshot streams captured every run", async () => {
    const [captures] = await h.sql<{ n: number; streams: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT stream)::int AS streams FROM sync_windows WHERE window_end = window_start`;
    expect(captures!.streams).toBeGreaterThan(3);
    expect(captures!.n).toBeGreaterThanOrEqual(captures!.streams * RUNS);
    expect(await gaps()).toEqual([]);
    expect(await h.sql.unsafe(panelSql())).toEqual([]);
  });

  it("a range reset forgets is a hole, in the view and in the Grafana panel", async () => {
    const pcode = h.pcodes[0]!;
    const [a, b] = [Date.UTC(2026, 1, 18, 10), Date.UTC(2026, 1, 18, 11)];
    const env = cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects });
    const reset = await runCli(["reset", "--streams", "stat.sql", "--projects", String(pcode), "--from", iso(a), "--to", iso(b)], env);
    expect(reset.stdout, reset.stderr).toContain(`stat.sql pcode=${pcode}: forgot 1 window(s) ${iso(a)} .. ${iso(b)}`);
    expect(await gaps()).toEqual([`stat.sql ${pcode} hole ${iso(a)}..${iso(b)}`]);
    const panel = await h.sql.unsafe<{ stream: string; kind: string; gap_start: Date; gap_end: Date }[]>(panelSql());
    expect(panel.map((r) => `${r.stream} ${r.kind} ${iso(r.gap_start.getTime())}..${iso(r.gap_end.getTime())}`)).toEqual([
      `stat.sql hole ${iso(a)}..${iso(b)}`,
    ]);
    // The next sync fills it: the view is empty again.
    expect((await h.run({ command: "sync", mode: { kind: "sync" }, streams: ["stat.sql"] })).exitCode).toBe(0);
    expect(await gaps()).toEqual([]);
  });
});
