// Tracing: when the standard OTEL_* variables turn it on (and what is refused), the no-op facade
// when they do not, and the SDK-backed facade: parents passed explicitly, tokens masked out of
// every attribute, event and status message, one warning when spans could not be sent.
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { tracingOf } from "../../src/config/tracing.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { openTracing } from "../../src/tracing/open.ts";
import { startOtelTracing } from "../../src/tracing/otel.ts";
import { NO_SPAN, NO_TRACING } from "../../src/tracing/tracer.ts";
import { createLogger } from "../../src/util/logger.ts";
import { Secret } from "../../src/util/secret.ts";
import { PROJECT_TOKEN } from "../support/http-server.ts";

const API = { APM_BASE_URL: "http://127.0.0.1:1", APM_PROJECTS: "12:tok-a" };
const TOKEN = PROJECT_TOKEN;

type Exported = Parameters<SpanExporter["export"]>[0];

/** An exporter that keeps what it is given, or fails every batch with `error`. */
function memoryExporter(error?: Error): SpanExporter & { spans: Exported } {
  const spans: Exported = [];
  return {
    spans,
    export: (batch, done) => {
      if (error) return done({ code: 1, error });
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
}

/** The SDK-backed facade over `exporter`, masking TOKEN, its warnings kept in `warnings`. */
const sdkTracing = (exporter: SpanExporter, warnings: string[]) =>
  startOtelTracing({
    url: "http://unused",
    timeoutMs: 1_000,
    version: "0.0.0",
    secrets: [new Secret(TOKEN)],
    warn: (m) => warnings.push(m),
    exporter,
  });

describe("tracingOf (the OTEL_* variables)", () => {
  it("is off without an endpoint, with the SDK disabled, or with another exporter chosen; empty means unset", () => {
    expect(tracingOf({}).tracing).toBeNull();
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }).tracing).toBeNull();
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(tracingOf({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" }).tracing).toBeNull();
    expect(tracingOf({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }).tracing).toBeNull();
    expect(tracingOf({ ...endpoint, OTEL_TRACES_EXPORTER: "console, otlp" }).tracing).not.toBeNull();
    expect(tracingOf({ ...endpoint, OTEL_SDK_DISABLED: "false", OTEL_TRACES_EXPORTER: "" }).tracing).not.toBeNull();
  });

  it("sends to the base endpoint's /v1/traces, or to the traces endpoint as given; the export timeout from the SDK's variables", () => {
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing).toEqual({
      url: "http://collector:4318/v1/traces",
      timeoutMs: 10_000,
    });
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/base", OTEL_EXPORTER_OTLP_TIMEOUT: "2500" }).tracing).toEqual({
      url: "https://otel.example/base/v1/traces",
      timeoutMs: 2_500,
    });
    const both = {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "700",
    };
    expect(tracingOf(both).tracing).toEqual({ url: "http://b:4318/custom", timeoutMs: 700 });
  });

  it("refuses (exit 2, at load) an endpoint that is no http(s) URL without echoing it, grpc, and a bad timeout", () => {
    const secretish = "collector.example:4318?auth=s3cr3t";
    const bad = tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: secretish });
    expect(bad.tracing).toBeNull();
    expect(bad.problems).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT: must start with http:\/\/ or https:\/\//)]);
    expect(bad.problems.join()).not.toContain("s3cr3t");
    const grpc = tracingOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(grpc.problems).toEqual([
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported.*OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/),
    ]);
    const timeout = tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TIMEOUT: "5s" });
    expect(timeout.problems).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_TIMEOUT: expected a whole number of milliseconds/)]);
    // Beyond a timer's range (issue 38): Node fires it after 1 ms.
    for (const [value, says] of [
      [
        "2592000000",
        /^OTEL_EXPORTER_OTLP_TIMEOUT: expected a whole number of milliseconds from 1 to 86400000 \(a day\), got "2592000000"$/,
      ],
      ["x", /^OTEL_EXPORTER_OTLP_TIMEOUT: /],
    ] as const)
      expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TIMEOUT: value }).problems).toEqual([
        expect.stringMatching(says),
      ]);
    expect(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://col lector:4318" }).problems).toEqual([
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT: holds a space or line break at character 11/),
    ]);
    try {
      loadConfig({ env: { ...API, OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://c" }, requireApi: true });
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT: /)]);
    }
  });
});

describe("the tracer a command gets", () => {
  it("is the no-op facade when no endpoint is configured: every span is NO_SPAN", async () => {
    const config = loadConfig({ env: API, requireApi: true });
    expect(config.tracing).toBeNull();
    const tracing = await openTracing(config, createLogger({ level: "silent", format: "plain" }));
    expect(tracing).toBe(NO_TRACING);
    expect(tracing.tracer.startSpan("run", { "apm.run_id": 1 })).toBe(NO_SPAN);
  });

  it("with the SDK: children under the parent given, no attribute left undefined, tokens masked everywhere", async () => {
    const exporter = memoryExporter();
    const warnings: string[] = [];
    const tracing = sdkTracing(exporter, warnings);
    const run = tracing.tracer.startSpan("apm-sync sync", { "apm.command": "sync", "apm.streams": undefined });
    const window = tracing.tracer.startSpan("window", { "apm.stream": "stat.sql", "apm.note": `sent ${TOKEN}` }, run);
    const request = tracing.tracer.startSpan("GET", { "url.path": "/open/api/x" }, window, "client");
    request.setAttributes({ "http.response.status_code": 401, "apm.echo": TOKEN.toUpperCase() });
    request.fail(`refused token ${TOKEN}`);
    window.addEvent("retry", { "error.type": `x-${TOKEN}` });
    for (const span of [request, window, run]) span.end();
    await tracing.shutdown();
    expect(warnings).toEqual([]);

    const byName = new Map(exporter.spans.map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).toEqual(["GET", "apm-sync sync", "window"]);
    const [r, w, g] = [byName.get("apm-sync sync")!, byName.get("window")!, byName.get("GET")!];
    expect(r.parentSpanContext).toBeUndefined();
    expect(w.parentSpanContext?.spanId).toBe(r.spanContext().spanId);
    expect(g.parentSpanContext?.spanId).toBe(w.spanContext().spanId);
    expect(new Set(exporter.spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(g.kind).toBe(2); // SpanKind.CLIENT
    expect(r.attributes).toEqual({ "apm.command": "sync" });
    expect(r.resource.attributes["service.name"]).toBe("apm-sync");
    expect(w.attributes["apm.note"]).toBe("sent ***");
    expect(g.attributes).toEqual({ "url.path": "/open/api/x", "http.response.status_code": 401, "apm.echo": "***" });
    expect(g.status).toEqual({ code: 2, message: "refused token ***" });
    expect(w.events.map((e) => e.attributes)).toEqual([{ "error.type": "x-***" }]);
    expect(JSON.stringify(exporter.spans.map((s) => [s.attributes, s.events, s.status]))).not.toContain(TOKEN);
  });

  it("says once, masked, that spans could not be sent; the shutdown itself never throws", async () => {
    const warnings: string[] = [];
    const exporter = memoryExporter(new Error(`collector refused ${TOKEN}`));
    const tracing = sdkTracing(exporter, warnings);
    tracing.tracer.startSpan("window", {}).end();
    await tracing.shutdown();
    expect(warnings).toEqual([
      "tracing: some spans could not be sent to the OTLP endpoint (1 of 1 batch(es) failed: collector refused ***); the run itself is not affected",
    ]);
  });
});
