// The facade of tracer.ts backed by the official OpenTelemetry SDK: spans batched and exported as
// OTLP over HTTP (JSON bodies) to the configured endpoint. Loaded only by open.ts, with import(),
// when an endpoint is configured. Our own provider, never registered globally: a library that
// traces through the global API (drizzle-orm can) stays a no-op, and parents are passed
// explicitly (no context manager). Every string attribute, event attribute and status message is
// masked with the configured tokens here, whatever the caller passed.
import { type Attributes, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { redact, type Secret } from "../util/secret.ts";
import type { SpanKindName, TraceAttributes, Tracer, TraceSpan, Tracing } from "./tracer.ts";

export interface OtelOptions {
  /** Where the spans go: the traces endpoint itself (…/v1/traces). */
  readonly url: string;
  /** An export gives up after this long, retries included; so does the end of the command. */
  readonly timeoutMs: number;
  readonly version: string;
  /** Every configured token: masked out of every string that leaves. */
  readonly secrets: readonly Secret[];
  /** Said once when spans could not be sent; the command goes on (and exits as it would). */
  readonly warn: (message: string) => void;
  /** Tests: another exporter (in memory) instead of OTLP/HTTP. */
  readonly exporter?: SpanExporter;
}

// ExportResultCode.SUCCESS of @opentelemetry/core (not a dependency of ours).
const SUCCESS = 0;

export function startOtelTracing(o: OtelOptions): Tracing {
  // The exporter's own timeout bounds its retries too: past it, nothing of it keeps the process up.
  const counted = countingExporter(o.exporter ?? new OTLPTraceExporter({ url: o.url, timeoutMillis: o.timeoutMs }));
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the SDK) win over our defaults.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "apm-sync", "service.version": o.version }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, spanProcessors: [new BatchSpanProcessor({ exporter: counted.exporter })] });
  const sdk = provider.getTracer("apm-sync", o.version);
  const mask = (text: string) => redact(text, o.secrets);
  const tracer: Tracer = {
    startSpan: (name, attributes, parent, kind = "internal") => {
      const ctx = parent instanceof OtelSpan ? trace.setSpan(ROOT_CONTEXT, parent.span) : ROOT_CONTEXT;
      const span = sdk.startSpan(name, { kind: KINDS[kind], attributes: masked(attributes, mask) }, ctx);
      return new OtelSpan(span, mask);
    },
  };
  return { tracer, shutdown: () => shutdown(provider, counted, o) };
}

const KINDS: Record<SpanKindName, SpanKind> = { client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };

class OtelSpan implements TraceSpan {
  constructor(
    readonly span: Span,
    private readonly mask: (text: string) => string,
  ) {}

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(masked(attributes, this.mask));
  }

  addEvent(name: string, attributes: TraceAttributes = {}): void {
    this.span.addEvent(name, masked(attributes, this.mask));
  }

  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: this.mask(message) });
  }

  end(): void {
    this.span.end();
  }
}

function masked(attributes: TraceAttributes, mask: (text: string) => string): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) out[key] = typeof value === "string" ? mask(value) : value;
  }
  return out;
}

/** The exporter, counting the batches it could not send and keeping the last reason. */
function countingExporter(inner: SpanExporter) {
  const state = { batches: 0, failed: 0, reason: "" };
  const exporter: SpanExporter = {
    export: (spans, done) => {
      state.batches += 1;
      inner.export(spans, (result) => {
        if (result.code !== SUCCESS) {
          state.failed += 1;
          state.reason = result.error?.message ?? "export failed";
        }
        done(result);
      });
    },
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  };
  return { exporter, state };
}

/** Sends the spans still batched, within the export timeout; one warning when some never left. */
async function shutdown(provider: TracerProvider, counted: ReturnType<typeof countingExporter>, o: OtelOptions): Promise<void> {
  // A little past the exporter's own deadline, so that its reason is the one said.
  const ms = o.timeoutMs + 500;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the collector could not be reached or did not answer within ${o.timeoutMs} ms`), ms);
    timer.unref();
  });
  const sent = provider.shutdown().then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  const lost = await Promise.race([sent, late]).finally(() => clearTimeout(timer));
  const { failed, batches, reason } = counted.state;
  if (lost === null && failed === 0) return;
  const why = failed > 0 ? `${failed} of ${batches} batch(es) failed: ${reason}` : lost;
  o.warn(`tracing: some spans could not be sent to the OTLP endpoint (${redact(String(why), o.secrets)}); the run itself is not affected`);
}
