// A tiny real HTTP server on 127.0.0.1, port 0, that records every request it sees.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../../src/config.ts";
import { Secret } from "../../src/util/secret.ts";

export interface RecordedRequest {
  readonly method: string;
  /** Raw request target as sent (path + query, still percent-encoded). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Answer one request; `index` is its 0-based position among all requests the server saw. */
export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      requests.push(rec);
      Promise.resolve(handler(rec, res, requests.length - 1)).catch((e: unknown) => {
        res.statusCode = 599;
        res.end(String(e));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Stalled handlers never answer: cut their sockets so close() returns.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound then released), for connection-refused tests. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sends a JSON or text answer. */
export function reply(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
}

export const ACCOUNT_TOKEN = "acct-T0KEN-7f3a9c";
export const PROJECT_TOKEN = "proj-T0KEN-12-b81e44";

/** An api config for tests: account token, project 12 with its token, fast limits. */
export function testApiConfig(baseUrl: string, patch: Partial<Config["api"]> = {}): Config["api"] {
  return {
    baseUrl,
    accountToken: new Secret(ACCOUNT_TOKEN),
    projects: [{ pcode: 12, token: new Secret(PROJECT_TOKEN) }],
    tokenHeader: "x-service-token",
    pcodeHeader: "x-service-pcode",
    timeoutMs: 2_000,
    maxResponseBytes: 1024 * 1024,
    maxRecordBytes: 256 * 1024,
    memoryBudget: 4 * 1024 * 1024,
    proxy: null,
    retries: 3,
    concurrency: 4,
    requestsPerSecond: 1_000,
    overrides: {},
    ...patch,
  };
}

/** A sleep that returns at once and records what it was asked to wait. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}
