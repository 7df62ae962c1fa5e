// Trace export from the standard OpenTelemetry variables: on when an OTLP endpoint is set, unless
// the SDK is disabled or another trace exporter is chosen. Whether, where and how long an export
// may take are decided here; the SDK reads its other variables (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) itself when it is loaded.

/** Where spans are exported (OTLP over HTTP, JSON bodies); null in Config when tracing is off. */
export interface TracingConfig {
  /** The traces endpoint itself: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  readonly url: string;
  /**
   * An export, its retries included, gives up after this long, and the end of a command waits no
   * longer for the last spans (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT / OTEL_EXPORTER_OTLP_TIMEOUT, ms).
   */
  readonly timeoutMs: number;
}

/** The OpenTelemetry specification's default export timeout. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;

/** Tracing from `env` (empty variables count as unset), and what is wrong with it (exit 2). */
export function tracingOf(env: NodeJS.ProcessEnv): { tracing: TracingConfig | null; problems: string[] } {
  const get = (name: string) => env[name]?.trim() || undefined;
  const off = { tracing: null, problems: [] };
  if (get("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return off;
  const exporters = get("OTEL_TRACES_EXPORTER")
    ?.toLowerCase()
    .split(",")
    .map((s) => s.trim());
  if (exporters && !exporters.includes("otlp")) return off;
  const signal = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = get("OTEL_EXPORTER_OTLP_ENDPOINT");
  const name = signal ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const url = signal ?? (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!url) return off;
  const problems: string[] = [];
  const timeoutName = get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
  const timeoutText = get(timeoutName);
  const timeoutMs = timeoutText === undefined ? DEFAULT_EXPORT_TIMEOUT_MS : Number(timeoutText);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    problems.push(`${timeoutName}: expected a whole number of milliseconds above 0, got ${JSON.stringify(timeoutText)}`);
  // Never echoed: an endpoint may carry a collector's credentials.
  if (!isHttpUrl(url))
    problems.push(`${name}: not an http:// or https:// URL (the OTLP/HTTP address of a collector, e.g. http://localhost:4318)`);
  const protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? get("OTEL_EXPORTER_OTLP_PROTOCOL");
  if (protocol === "grpc")
    problems.push(
      `${get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"}: grpc is not supported; apm-sync exports OTLP over HTTP: unset it (or set http/json) and point ${name} at the collector's HTTP port (4318)`,
    );
  return problems.length > 0 ? { tracing: null, problems } : { tracing: { url, timeoutMs }, problems };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
