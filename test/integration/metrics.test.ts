// Prometheus metrics of real processes against the sandbox: a `worker` serving /metrics during and
// after a queued backfill (rows written add up to the tables, a lag gauge per synced stream and
// project read from the ledger, requests counted by the status the sandbox answered), and a
// one-shot `backfill` pushing to a small HTTP server standing in for the Pushgateway.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildRun, cliEnv, runCli, spawnCli, waitUntil } from "../support/child-sync.ts";
import { DAY, type EngineHarness, HOUR, startEngineHarness, tableOf } from "../support/engine-harness.ts";
import { startServer } from "../support/http-server.ts";
import { parseExposition, type Sample, samplesOf, sumOf } from "../support/prom-text.ts";

const NOW = Date.UTC(2026, 1, 20);
const FROM = Date.UTC(2026, 1, 16);
const TO = FROM + 2 * DAY;
const QUEUED = ["stat.transaction", "stat.sql", "range.sql", "range.exception"];
const PUSHED = ["stat.error", "range.remote"];
const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(port: number, path = "/metrics"): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}

describe("metrics", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  let tokens: string[];
  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, maxRecords: 300, burstKeys: 0, projects: 2, latencyMs: [5, 25] });
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      accountToken: h.sandbox.accountToken,
      // The watermark starts at FROM, so that the backfilled streams have one (and a lag).
      extra: { APM_START: iso(FROM), APM_RETRIES: "8", APM_LOG_LEVEL: "info" },
    });
    tokens = [h.sandbox.accountToken, ...h.sandbox.projects.map((p) => p.token)];
  });
  afterAll(() => h?.close());

  const tableCount = async (stream: string) => {
    const [row] = await h.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${tableOf(stream)}"`);
    return row!.n;
  };

  it("a worker's /metrics during and after a queued backfill: rows add up, a lag gauge per stream and project, requests by status", async () => {
    h.sandbox.setFaults(0.06, ["429", "500", "503"]);
    const range = ["--from", iso(FROM), "--to", iso(TO), "--streams", QUEUED.join(","), "--chunk", "12h"];
    const queued = await runCli(["enqueue", "backfill", ...range], env);
    expect(queued.stdout, queued.stderr).toContain("32 job(s) added");
    const worker: ChildRun = spawnCli(["worker", "--concurrency", "2"], { ...env, APM_METRICS_PORT: "0" }, { timeoutMs: 150_000 });
    const listening = /metrics: http:\/\/\S+?:(\d+)\/metrics/;
    expect(await waitUntil(worker, () => listening.test(worker.stderr()), 20)).toBe("ready");
    const port = Number(listening.exec(worker.stderr())![1]);

    // During: jobs still queued or running, some rows written already.
    let during: Sample[] | null = null;
    for (let i = 0; i < 600 && !during; i++) {
      const samples = parseExposition((await scrape(port)).text);
      const open = sumOf(samples, "apm_sync_queue_jobs", { state: "queued" }) + sumOf(samples, "apm_sync_queue_jobs", { state: "running" });
      if (open > 0 && sumOf(samples, "apm_sync_rows_written_total") > 0) during = samples;
      else await sleep(50);
    }
    expect(during).not.toBeNull();
    expect((await scrape(port, "/healthz")).status).toBe(200);
    let inTables = 0;
    for (const stream of QUEUED) inTables += await tableCount(stream);
    // A window counts once committed, so the counters never run ahead of the tables.
    expect(sumOf(during!, "apm_sync_rows_written_total")).toBeLessThanOrEqual(inTables);
    expect(samplesOf(during!, "apm_sync_info", { command: "worker" })).toHaveLength(1);

    for (let i = 0; i < 1200; i++) {
      const [q] = await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM apm_queue.jobs`;
      if (q?.n === 0) break;
      await sleep(100);
    }
    const { status, text } = await scrape(port);
    expect(status).toBe(200);
    const after = parseExposition(text);
    expect(after.filter((s) => s.name === "apm_sync_queue_jobs").every((s) => s.value === 0)).toBe(true);

    // Rows written add up to the rows in the tables, per stream and per project.
    for (const stream of QUEUED) {
      expect({ stream, rows: sumOf(after, "apm_sync_rows_written_total", { stream }) }).toEqual({ stream, rows: await tableCount(stream) });
      for (const pcode of h.pcodes) {
        const [row] = await h.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${tableOf(stream)}" WHERE pcode = $1`, [pcode]);
        expect(sumOf(after, "apm_sync_rows_written_total", { stream, pcode: String(pcode) })).toBe(row!.n);
      }
    }
    expect(sumOf(after, "apm_sync_windows_total", { status: "failed" })).toBe(0);
    expect(sumOf(after, "apm_sync_windows_total")).toBeGreaterThanOrEqual(QUEUED.length * 2 * 48);

    // Every synced stream and project has a lag gauge, from its watermark in the ledger.
    const marks = await h.sql<{ stream: string; pcode: string; s: number }[]>`
      SELECT stream, pcode::text, extract(epoch from min(watermark))::float8 AS s FROM watermarks GROUP BY 1, 2`;
    expect(marks.length).toBe(QUEUED.length * h.pcodes.length);
    for (const m of marks) {
      const labels = { stream: m.stream, pcode: m.pcode };
      expect({ ...labels, lag: samplesOf(after, "apm_sync_stream_lag_seconds", labels).length }).toEqual({ ...labels, lag: 1 });
      expect(sumOf(after, "apm_sync_stream_watermark_timestamp_seconds", labels)).toBe(m.s);
      expect(sumOf(after, "apm_sync_stream_last_success_timestamp_seconds", labels)).toBeGreaterThan(0);
    }

    // Requests by status: exactly what the sandbox answered (the worker was its only client).
    const answered = new Map<string, number>();
    for (const e of h.sandbox.requestLog.filter((e) => e.opId !== null))
      answered.set(String(e.status), (answered.get(String(e.status)) ?? 0) + 1);
    expect(answered.get("429") ?? 0).toBeGreaterThan(0);
    expect(answered.get("503") ?? 0).toBeGreaterThan(0);
    const counted = new Map(
      [...new Set(samplesOf(after, "apm_sync_requests_total").map((s) => s.labels.code!))].map((code) => [
        code,
        sumOf(after, "apm_sync_requests_total", { code }),
      ]),
    );
    expect(counted).toEqual(answered);
    expect(sumOf(after, "apm_sync_requests_total", { class: "5xx" })).toBe((answered.get("500") ?? 0) + (answered.get("503") ?? 0));
    expect(sumOf(after, "apm_sync_rate_limited_total")).toBe(answered.get("429"));
    expect(sumOf(after, "apm_sync_retries_total", { reason: "rate_limited" })).toBe(answered.get("429"));
    expect(sumOf(after, "apm_sync_retries_total", { reason: "server_error" })).toBe(
      (answered.get("500") ?? 0) + (answered.get("503") ?? 0),
    );
    const rate = sumOf(after, "apm_sync_rate_limit_rps");
    expect(rate > 0 && rate <= 1000).toBe(true);
    for (const token of tokens) expect(text.includes(token)).toBe(false);

    const stopped = await worker.kill("SIGTERM");
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(143);
    h.sandbox.setFaults(0);
  });

  it("a one-shot backfill pushes its metrics at the end: its own counters and the whole ledger's gauges", async () => {
    const gateway = await startServer((_req, res) => void res.writeHead(200).end());
    try {
      const args = ["backfill", "--from", iso(FROM), "--to", iso(FROM + 6 * HOUR), "--streams", PUSHED.join(",")];
      const r = await runCli(args, { ...env, APM_PUSHGATEWAY_URL: gateway.url });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(gateway.requests.map((q) => `${q.method} ${q.url}`)).toEqual(["PUT /metrics/job/apm-sync/command/backfill"]);
      const body = gateway.requests[0]!.body;
      const pushed = parseExposition(body);
      for (const stream of PUSHED) expect(sumOf(pushed, "apm_sync_rows_written_total", { stream })).toBe(await tableCount(stream));
      expect(sumOf(pushed, "apm_sync_run_duration_seconds_count", { command: "backfill", status: "ok" })).toBe(1);
      // The ledger gauges are the warehouse's: the worker's streams too, not only this run's.
      for (const stream of [...PUSHED, ...QUEUED])
        for (const pcode of h.pcodes)
          expect(samplesOf(pushed, "apm_sync_stream_lag_seconds", { stream, pcode: String(pcode) })).toHaveLength(1);
      for (const token of tokens) expect(body.includes(token)).toBe(false);
    } finally {
      await gateway.close();
    }
  });

  it("the worker's /metrics listens on 127.0.0.1 by default; APM_METRICS_HOST=0.0.0.0 opens it to every interface", async () => {
    // Linux routes all of 127.0.0.0/8 to the loopback: 127.0.0.2 stands in for another interface.
    const reach = (host: string, port: number) =>
      fetch(`http://${host}:${port}/healthz`).then(
        (r) => r.status,
        (e: { cause?: { code?: string } }) => e.cause?.code ?? "error",
      );
    for (const [host, other] of [
      [undefined, "ECONNREFUSED"],
      ["0.0.0.0", 200],
    ] as const) {
      const extra = { APM_METRICS_PORT: "0", ...(host ? { APM_METRICS_HOST: host } : {}) };
      const worker = spawnCli(["worker"], { ...env, ...extra }, { timeoutMs: 60_000 });
      const listening = /metrics: http:\/\/(\S+?):(\d+)\/metrics/;
      expect(await waitUntil(worker, () => listening.test(worker.stderr()), 20)).toBe("ready");
      const [, shown, port] = listening.exec(worker.stderr())!;
      expect(shown).toBe(host ?? "127.0.0.1");
      expect(await reach("127.0.0.1", Number(port))).toBe(200);
      expect({ host, other: await reach("127.0.0.2", Number(port)) }).toEqual({ host, other });
      expect((await worker.kill("SIGTERM")).code).toBe(143);
    }
  });

  it("a push that fails is a warning; the run's exit code stands", async () => {
    const gateway = await startServer((_req, res) => void res.writeHead(503).end("down"));
    try {
      const args = ["sync", "--streams", "stat.remote", "--projects", String(h.pcodes[0])];
      const r = await runCli(args, { ...env, APM_START: iso(NOW - 2 * HOUR), APM_PUSHGATEWAY_URL: `${gateway.url}/` });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(gateway.requests.map((q) => `${q.method} ${q.url}`)).toEqual(["PUT /metrics/job/apm-sync/command/sync"]);
      expect(r.stderr).toContain(`metrics were not pushed to the Pushgateway ${gateway.url}`);
    } finally {
      await gateway.close();
    }
  });
});
