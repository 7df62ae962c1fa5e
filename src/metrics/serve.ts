// `worker` serves GET /metrics (Prometheus text format) and GET /healthz on APM_METRICS_PORT, on
// the address APM_METRICS_HOST (this machine only by default: the metrics name projects and
// streams, and nothing authenticates a scraper).
// /healthz answers 200 while the worker takes jobs and 503 once it is stopping: a liveness check
// that a database outage does not fail (the worker waits for the database; restarting it would
// not help).
import { createServer, type Server } from "node:http";
import { type AddressInfo, isIPv6 } from "node:net";
import type { Registry } from "prom-client";
import { describeError } from "../engine/describe-error.ts";
import type { Logger } from "../util/logger.ts";

export interface MetricsServer {
  /** The port listened on (APM_METRICS_PORT=0 picks a free one). */
  readonly port: number;
  close(): Promise<void>;
}

export interface ServeOptions {
  readonly registry: Registry;
  readonly port: number;
  /** Address to listen on (APM_METRICS_HOST); 127.0.0.1 by default. A container listens on 0.0.0.0. */
  readonly host?: string;
  /** null while healthy, else why not (answered with 503). */
  readonly unhealthy: () => string | null;
  readonly logger: Logger;
}

export async function serveMetrics(opts: ServeOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
    } else if (path === "/metrics") {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": opts.registry.contentType }).end(text),
        (e: unknown) => {
          opts.logger.warn(`/metrics: ${describeError(e)}`);
          res.writeHead(500, { "content-type": "text/plain" }).end("metrics could not be collected\n");
        },
      );
    } else if (path === "/healthz") {
      const why = opts.unhealthy();
      res.writeHead(why ? 503 : 200, { "content-type": "text/plain" }).end(why ? `${why}\n` : "ok\n");
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("GET /metrics or /healthz\n");
    }
  });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  opts.logger.info(`metrics: http://${isIPv6(host) ? `[${host}]` : host}:${port}/metrics (health: /healthz)`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
