// Trace export from the standard OpenTelemetry variables: on when an OTLP endpoint is set, unless
// the SDK is disabled or another trace exporter is chosen. Whether, where and how long an export
// may take are decided here; the SDK reads its other variables (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) itself when it is loaded.
import { TIMER_MAX } from "./time-values.ts";
import { urlProblem } from "./values.ts";

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
const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;

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
  // The traces-only variable when set, else the general one: its name (for messages) and value.
  const either = (traces: string, general: string) => {
    const name = get(traces) ? traces : general;
    return { name, value: get(name), traces: name === traces };
  };
  const endpoint = either("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT");
  const url = endpoint.traces ? endpoint.value : endpoint.value && `${endpoint.value.replace(/\/+$/, "")}/v1/traces`;
  if (!url) return off;
  const problems: string[] = [];
  const timeout = either("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT");
  const timeoutMs = timeout.value === undefined ? DEFAULT_EXPORT_TIMEOUT_MS : Number(timeout.value);
  // The spec's unit is the millisecond; a timer holds at most TIMER_MAX.
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > TIMER_MAX)
    problems.push(
      `${timeout.name}: expected a whole number of milliseconds from 1 to ${TIMER_MAX} (a day), got ${JSON.stringify(timeout.value)}`,
    );
  // Never echoed: an endpoint may carry a collector's credentials.
  const urlIs = urlProblem(url, ["http:", "https:"]);
  if (urlIs) problems.push(`${endpoint.name}: ${urlIs} (the OTLP/HTTP address of a collector, e.g. http://localhost:4318)`);
  const protocol = either("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  if (protocol.value === "grpc")
    problems.push(
      `${protocol.name}: grpc is not supported; apm-sync exports OTLP over HTTP: unset it (or set http/json) and point ${endpoint.name} at the collector's HTTP port (4318)`,
    );
  return problems.length > 0 ? { tracing: null, problems } : { tracing: { url, timeoutMs }, problems };
}
