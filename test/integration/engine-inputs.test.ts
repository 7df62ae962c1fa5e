// Streams that need request inputs (a host/port filter, a tx_caller filter) run once per input
// from the config file, each as its own partition: one partition never replaces another's rows.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 2, 3, 0, 0);
const FROM = Date.UTC(2026, 2, 1, 0, 0);
const TO = FROM + 6 * HOUR;

describe("streams with configured inputs", () => {
  let h: EngineHarness;
  let dir: string;
  let filters: { host: string; port: number }[];

  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, burstKeys: 0 });
    // Two real host/port pairs of the first project's outbound calls.
    const seen = new Map<string, { host: string; port: number }>();
    for (const r of h.truth.records(h.pcodes[0]!, "range.httpc", FROM, TO))
      seen.set(`${r.Host}:${r.Port}`, { host: String(r.Host), port: Number(r.Port) });
    filters = [...seen.values()].slice(0, 2);
    expect(filters).toHaveLength(2);
    dir = await mkdtemp(join(tmpdir(), "apm-inputs-"));
    const config = {
      inputs: {
        "range.httpc.filtered": filters,
        "calls.tx_caller": [{ filterkey: "caller_url", filterval: "/order/list" }],
      },
    };
    await writeFile(join(dir, "config.json"), JSON.stringify(config));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("fills each filter's partition with exactly the ground truth, and keeps tx_caller payloads", async () => {
    const pcode = h.pcodes[0]!;
    const result = await h.run(
      {
        command: "backfill",
        mode: { kind: "backfill", from: FROM, to: TO },
        streams: ["range.httpc.filtered", "calls.tx_caller"],
        projects: [pcode],
      },
      { APM_CONFIG: join(dir, "config.json") },
    );
    expect(result.exitCode).toBe(0);
    for (const f of filters) {
      const rows = await h.sql<{ n: string; total: string }[]>`
        SELECT count(*)::text AS n, coalesce(sum(total), 0)::text AS total FROM range_httpc_by_service
        WHERE pcode = ${pcode} AND filter_host = ${f.host} AND filter_port = ${String(f.port)}`;
      const truth = h.truth.records(pcode, "range.httpc.filtered", FROM, TO, f);
      const expected = truth.reduce((n, r) => n + Number(r.Total), 0);
      expect(truth.length).toBeGreaterThan(0);
      expect(Number(rows[0]!.total), `${f.host}:${f.port}`).toBe(expected);
      // Every stored row of this partition is a call to that host and port.
      const other =
        await h.sql`SELECT 1 FROM range_httpc_by_service WHERE filter_host = ${f.host} AND filter_port = ${String(f.port)} AND (host <> ${f.host} OR port <> ${f.port}) LIMIT 1`;
      expect(other).toHaveLength(0);
    }
    const partitions = await h.sql<
      { partition: string }[]
    >`SELECT DISTINCT partition FROM sync_windows WHERE stream = 'range.httpc.filtered' ORDER BY 1`;
    expect(partitions.map((p) => p.partition)).toEqual(filters.map((f) => `host=${f.host}&port=${f.port}`).sort());
    const calls = await h.sql<{ filter_key: string; filter_value: string; n: string }[]>`
      SELECT filter_key, filter_value, count(*)::text AS n FROM tx_calls WHERE pcode = ${pcode} GROUP BY 1, 2`;
    expect(calls).toEqual([{ filter_key: "caller_url", filter_value: "/order/list", n: "6" }]);
  }, 120_000);

  it("re-fetching one partition leaves the other partition's rows alone", async () => {
    const pcode = h.pcodes[0]!;
    const before = await h.sql<
      { filter_host: string; n: string }[]
    >`SELECT filter_host || ':' || filter_port AS filter_host, count(*)::text AS n FROM range_httpc_by_service GROUP BY 1 ORDER BY 1`;
    await writeFile(join(dir, "one.json"), JSON.stringify({ inputs: { "range.httpc.filtered": [filters[0]] } }));
    const again = await h.run(
      { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: ["range.httpc.filtered"], projects: [pcode] },
      { APM_CONFIG: join(dir, "one.json") },
    );
    expect(again.exitCode).toBe(0);
    expect(again.streams.get("range.httpc.filtered")?.windows).toBe(6);
    const after =
      await h.sql`SELECT filter_host || ':' || filter_port AS filter_host, count(*)::text AS n FROM range_httpc_by_service GROUP BY 1 ORDER BY 1`;
    expect(after).toEqual(before);
    expect(before).toHaveLength(2);
  }, 120_000);
});
