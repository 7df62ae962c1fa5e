// A queued backfill run by a `worker` that is not scraped but has a Pushgateway: its lag and
// watermark gauges reach the gateway while the worker keeps running, as a one-shot run's do when
// it ends. Before, such a worker pushed nothing until it exited (never, unless --until-idle), so
// the stale-stream alert had no watermark to look at for the queued streams.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { DAY, type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";
import { startServer } from "../support/http-server.ts";
import { parseExposition, samplesOf, sumOf } from "../support/prom-text.ts";

const NOW = Date.UTC(2026, 1, 20);
const FROM = NOW - 2 * DAY;
const STREAMS = ["stat.remote", "range.remote"];
const iso = (ms: number) => new Date(ms).toISOString();
let h: EngineHarness;

beforeAll(async () => {
  h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2 });
}, 120_000);
afterAll(() => h?.close());

describe("a worker with a Pushgateway and no metrics port", () => {
  it("pushes the queued streams' lag and watermark gauges after its jobs, while it keeps running", async () => {
    const gateway = await startServer((_req, res) => void res.writeHead(200).end());
    try {
      const env = {
        ...cliEnv({ baseUrl: h.sandbox.url, databaseUrl: h.db.url, projects: h.sandbox.projects, accountToken: h.sandbox.accountToken }),
        // The watermark starts at FROM, so that the backfilled streams have one.
        APM_START: iso(FROM),
        APM_PUSHGATEWAY_URL: gateway.url,
      };
      const queued = await runCli(
        ["enqueue", "backfill", "--from", iso(FROM), "--to", iso(NOW), "--streams", STREAMS.join(","), "--chunk", "1d"],
        env,
      );
      expect(queued.code, queued.stderr).toBe(0);
      const worker = spawnCli(["worker", "--concurrency", "2"], env, { timeoutMs: 400_000 });
      const marks = async () =>
        h.sql<{ stream: string; pcode: string; s: number }[]>`
          SELECT stream, pcode::text, extract(epoch from min(watermark))::float8 AS s FROM watermarks GROUP BY 1, 2`;
      // Done when a push carries the watermark of every queued stream and project as the ledger has it at the end.
      let expected = new Map<string, number>();
      const pushedAll = () => {
        const last = gateway.requests.at(-1);
        if (!last || expected.size < STREAMS.length * h.pcodes.length) return false;
        const pushed = parseExposition(last.body);
        return [...expected].every(([k, s]) => {
          const [stream, pcode] = k.split("/");
          return sumOf(pushed, "apm_sync_stream_watermark_timestamp_seconds", { stream: stream!, pcode: pcode! }) === s;
        });
      };
      const poll = setInterval(() => void marks().then((m) => (expected = new Map(m.map((r) => [`${r.stream}/${r.pcode}`, r.s])))), 200);
      const reached = await waitUntil(worker, pushedAll, 100);
      clearInterval(poll);
      expect(reached, worker.stderr().slice(-2000)).toBe("ready");
      // Still running: the pushes came from a worker that has not ended.
      expect(worker.child.exitCode).toBeNull();
      const last = parseExposition(gateway.requests.at(-1)!.body);
      for (const stream of STREAMS)
        for (const pcode of h.pcodes)
          expect(samplesOf(last, "apm_sync_stream_lag_seconds", { stream, pcode: String(pcode) })).toHaveLength(1);
      expect(gateway.requests.every((r) => `${r.method} ${r.url}`.startsWith("PUT /metrics/job/apm-sync/command/worker/instance/"))).toBe(
        true,
      );
      const stopped = await worker.kill("SIGTERM");
      expect(stopped.code, stopped.stderr.slice(-2000)).toBe(143);
    } finally {
      await gateway.close();
    }
  }, 450_000);
});
