// Traces of a real `sync` (the CLI as a child process) sent to a small OTLP/HTTP receiver: one run
// span, a span per target, a span per window the ledger holds, a span per HTTP request the sandbox
// saw, each under the right parent, with their attributes, and no token anywhere in what was sent.
// A collector that is down or hangs costs one warning, not the exit code; without an endpoint (or
// with the SDK disabled) nothing of the SDK is loaded and nothing is sent.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { type EngineHarness, startEngineHarness } from "../support/engine-harness.ts";
import { reply, startServer, unusedPort } from "../support/http-server.ts";
import { type OtlpSpan, spansOf } from "../support/otlp.ts";

const PRELOAD = fileURLToPath(new URL("../support/loaded-modules.mjs", import.meta.url));
const STREAMS = "account.projects,account.project_members,project.agents,stat.transaction,range.sql";
// What the SDK packages look like in a module path (the API package alone may come with others).
const SDK = /@opentelemetry[\\/](sdk-trace|exporter-trace-otlp-http|otlp-|resources|core)/;

describe("tracing (OTLP over HTTP)", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  let tokens: string[];
  let dir: string;

  beforeAll(async () => {
    // The CLI runs on the wall clock: the sandbox too. A small record cap splits windows.
    h = await startEngineHarness({ now: Date.now(), burstKeys: 0, maxRecords: 40 });
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      accountToken: h.sandbox.accountToken,
      extra: { APM_START: "3h", APM_RETRIES: "8", OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_SDK_DISABLED: "", OTEL_TRACES_EXPORTER: "" },
    });
    tokens = [h.sandbox.accountToken, ...h.sandbox.projects.map((p) => p.token)];
    dir = mkdtempSync(join(tmpdir(), "apm-tracing-"));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const loaded = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8")) as string[];

  it("a sync exports a span per run, target, window (as the ledger has them) and HTTP request (as the sandbox saw them)", async () => {
    const receiver = await startServer((_req, res) => reply(res, 200, "{}"));
    h.sandbox.clearLog();
    h.sandbox.setFaults(0.08, ["503"]);
    const run = await runCli(
      ["sync", "--streams", STREAMS],
      { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, TEST_LOADED_MODULES_FILE: join(dir, "on.json") },
      { preload: PRELOAD },
    );
    h.sandbox.setFaults(0, []);
    await receiver.close();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("tracing:");
    expect(loaded("on.json").some((p) => SDK.test(p))).toBe(true);

    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const r of receiver.requests) expect({ method: r.method, url: r.url }).toEqual({ method: "POST", url: "/v1/traces" });
    const sent = receiver.requests.map((r) => r.body).join("\n");
    for (const token of tokens) expect(sent.toLowerCase()).not.toContain(token.toLowerCase());
    const spans = receiver.requests.flatMap((r) => spansOf(JSON.parse(r.body)));
    expect(new Set(spans.map((s) => s.resource["service.name"]))).toEqual(new Set(["apm-sync"]));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (s: OtlpSpan) => byId.get(s.parentSpanId ?? "");

    // The run.
    const [{ id: runId }] = (await h.sql`SELECT max(id)::int AS id FROM sync_runs`) as unknown as [{ id: number }];
    const runs = spans.filter((s) => s.name === "apm-sync sync");
    expect(runs).toHaveLength(1);
    const root = runs[0]!;
    expect(root.parentSpanId).toBeFalsy();
    expect(root.attributes["apm.run_id"]).toBe(runId);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));

    // A span per target, under the run; the targets are those of the ledger.
    const ledger = await h.sql<
      { stream: string; pcode: string; partition: string; start: number; end: number; splits: number; retries: number }[]
    >`
      SELECT stream, pcode::text AS pcode, partition, (extract(epoch FROM window_start) * 1000)::float8 AS start,
             (extract(epoch FROM window_end) * 1000)::float8 AS end, splits, retries
      FROM sync_windows WHERE run_id = ${runId}`;
    expect(ledger.length).toBeGreaterThan(0);
    const key = (stream: unknown, pcode: unknown, partition: unknown) => `${stream}|${pcode}|${partition ?? ""}`;
    const targets = spans.filter((s) => parentOf(s) === root);
    expect(targets.map((t) => key(t.attributes["apm.stream"], t.attributes["apm.pcode"], t.attributes["apm.partition"])).sort()).toEqual(
      [...new Set(ledger.map((w) => key(w.stream, w.pcode, w.partition)))].sort(),
    );
    for (const t of targets) expect(t.name).toBe(t.attributes["apm.stream"]);

    // A span per window, under its target; every ledger row lies in exactly one window span.
    const windows = spans.filter((s) => s.name === "window");
    for (const w of windows) {
      const target = parentOf(w)!;
      expect(targets).toContain(target);
      expect([w.attributes["apm.stream"], w.attributes["apm.pcode"]]).toEqual([
        target.attributes["apm.stream"],
        target.attributes["apm.pcode"],
      ]);
      expect(w.attributes).toMatchObject({ "apm.outcome": "done", "apm.rows": expect.any(Number), "apm.retries": expect.any(Number) });
    }
    const ms = (s: OtlpSpan, name: string) => Date.parse(String(s.attributes[name]));
    for (const row of ledger) {
      const holding = windows.filter(
        (w) =>
          key(w.attributes["apm.stream"], w.attributes["apm.pcode"], w.attributes["apm.partition"]) ===
            key(row.stream, row.pcode, row.partition) &&
          ms(w, "apm.window.start") <= row.start &&
          row.end <= ms(w, "apm.window.end"),
      );
      expect({ row, holding: holding.length }).toEqual({ row, holding: 1 });
    }
    const splits = ledger.reduce((n, w) => n + w.splits, 0);
    expect(splits).toBeGreaterThan(0);
    // Each split adds one ledger row (a leaf) to its window.
    expect(windows.length).toBe(ledger.length - splits);
    const sum = (list: OtlpSpan[], name: string) => list.reduce((n, s) => n + Number(s.attributes[name] ?? 0), 0);
    expect(sum(windows, "apm.leaves")).toBe(ledger.filter((w) => w.start !== w.end).length);

    // A span per HTTP request the sandbox answered, under its window, with its status.
    const requests = spans.filter((s) => s.kind === 3);
    const answered = h.sandbox.requestLog.filter((e) => e.opId !== null);
    expect(requests.length).toBe(answered.length);
    const statuses = (list: { path: string; status: number }[]) => list.map((r) => `${r.path} ${r.status}`).sort();
    expect(
      statuses(
        requests.map((r) => ({ path: String(r.attributes["url.path"]), status: Number(r.attributes["http.response.status_code"]) })),
      ),
    ).toEqual(statuses(answered));
    for (const r of requests) {
      expect(windows).toContain(parentOf(r));
      expect(r.name).toBe(r.attributes["http.request.method"]);
      expect(String(r.attributes["url.path"])).not.toContain("?");
    }
    expect(sum(windows, "apm.requests")).toBe(requests.length);

    // Retries: the sandbox's 503s, counted on the window, an event each, resend counts on the requests.
    const failedAttempts = requests.filter((r) => r.attributes["http.response.status_code"] === 503);
    expect(failedAttempts.length).toBeGreaterThan(0);
    for (const r of failedAttempts) expect(r.status?.code).toBe(2);
    const retries = ledger.reduce((n, w) => n + w.retries, 0);
    expect(retries).toBe(failedAttempts.length);
    expect(sum(windows, "apm.retries")).toBe(retries);
    expect(windows.reduce((n, w) => n + w.events.filter((e) => e.name === "retry").length, 0)).toBe(retries);
    expect(requests.filter((r) => Number(r.attributes["http.request.resend_count"] ?? 0) > 0)).toHaveLength(retries);
    expect(root.attributes["apm.retries"]).toBe(retries);
  }, 120_000);

  it("a worker sends a trace per queued job: its targets, windows and requests under it", async () => {
    const receiver = await startServer((_req, res) => reply(res, 200, "{}"));
    const queued = await runCli(["enqueue", "sync", "--streams", "project.agents,stat.sql"], env);
    expect(queued.code, queued.stderr).toBe(0);
    const worker = await runCli(["worker", "--until-idle"], { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    await receiver.close();
    expect(worker.code, worker.stderr).toBe(0);
    const spans = receiver.requests.flatMap((r) => spansOf(JSON.parse(r.body)));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const [{ id: runId }] = (await h.sql`SELECT max(id)::int AS id FROM sync_runs WHERE command = 'worker'`) as unknown as [{ id: number }];
    const jobs = spans.filter((s) => s.name === "apm-sync job");
    // One job per stream and project.
    expect(jobs).toHaveLength(2 * h.pcodes.length);
    for (const job of jobs) expect([job.parentSpanId, job.attributes["apm.run_id"]]).toEqual([undefined, runId]);
    const targets = spans.filter((s) => jobs.includes(byId.get(s.parentSpanId ?? "")!));
    expect(targets).toHaveLength(jobs.length);
    expect(new Set(targets.map((t) => t.traceId)).size).toBe(jobs.length);
    const windows = spans.filter((s) => s.name === "window");
    expect(windows.length).toBeGreaterThan(jobs.length);
    for (const w of windows) expect(targets).toContain(byId.get(w.parentSpanId ?? ""));
    // Every window sent at least one request: the loop below has something to check.
    const requests = spans.filter((s) => s.kind === 3);
    expect(requests.length).toBeGreaterThanOrEqual(windows.length);
    for (const r of requests) expect(windows).toContain(byId.get(r.parentSpanId ?? ""));
  }, 120_000);

  it("a collector that is down, or that never answers, costs one warning and not the exit code", async () => {
    // The export timeout (the SDK's variable) bounds the wait at the end.
    const quick = { ...env, OTEL_EXPORTER_OTLP_TIMEOUT: "1500" };
    const down = await runCli(["sync", "--streams", "project.agents"], {
      ...quick,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${await unusedPort()}/v1/traces`,
    });
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr.match(/tracing: /g)).toHaveLength(1);
    expect(down.stderr).toMatch(/tracing: some spans could not be sent to the OTLP endpoint \(1 of 1 batch\(es\) failed: .*ECONNREFUSED/);

    const hanging = await startServer(() => new Promise<void>(() => {}));
    const stalled = await runCli(["sync", "--streams", "project.agents"], { ...quick, OTEL_EXPORTER_OTLP_ENDPOINT: hanging.url });
    await hanging.close();
    expect(stalled.code, stalled.stderr).toBe(0);
    expect(hanging.requests.length).toBeGreaterThan(0);
    expect(stalled.stderr.match(/tracing: /g)).toHaveLength(1);
    expect(stalled.stderr).toContain("tracing: some spans could not be sent to the OTLP endpoint");
  }, 120_000);

  it("without an endpoint, or with the SDK disabled, nothing of the SDK is loaded and nothing is sent", async () => {
    const receiver = await startServer((_req, res) => reply(res, 200, "{}"));
    const unset = await runCli(
      ["sync", "--streams", "project.agents"],
      { ...env, TEST_LOADED_MODULES_FILE: join(dir, "off.json") },
      { preload: PRELOAD },
    );
    expect(unset.code, unset.stderr).toBe(0);
    expect(loaded("off.json").filter((p) => SDK.test(p))).toEqual([]);

    const disabled = await runCli(
      ["sync", "--streams", "project.agents"],
      {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SDK_DISABLED: "true",
        TEST_LOADED_MODULES_FILE: join(dir, "disabled.json"),
      },
      { preload: PRELOAD },
    );
    await receiver.close();
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(loaded("disabled.json").filter((p) => SDK.test(p))).toEqual([]);
    expect(receiver.requests).toHaveLength(0);
  }, 120_000);
});
