// The tracing of a command: the no-op facade when no OTLP endpoint is configured (nothing of the
// OpenTelemetry SDK is loaded), else the SDK, imported here and only here.
import { configuredSecrets } from "../config/credentials.ts";
import type { Config } from "../config.ts";
import type { Logger } from "../util/logger.ts";
import { packageVersion } from "../util/package-root.ts";
import { NO_TRACING, type Tracing } from "./tracer.ts";

export async function openTracing(config: Pick<Config, "tracing" | "api">, logger: Logger): Promise<Tracing> {
  if (!config.tracing) return NO_TRACING;
  logger.debug("tracing: loading the OpenTelemetry SDK (OTLP over HTTP)");
  const { startOtelTracing } = await import("./otel.ts");
  return startOtelTracing({
    url: config.tracing.url,
    timeoutMs: config.tracing.timeoutMs,
    version: packageVersion(),
    secrets: configuredSecrets(config.api),
    warn: (message) => logger.warn(message),
  });
}
