// A certificate the client does not trust is a TLS error that says so and how to fix it (a
// private CA: NODE_EXTRA_CA_CERTS), not a "connection failed" retried five times.
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiClient } from "../../src/api/client.ts";
import { TlsError } from "../../src/api/errors.ts";
import { operation } from "../../src/catalogue/index.ts";
import { recordingSleep, testApiConfig } from "../support/http-server.ts";
import { selfSignedCert, type TestCert } from "../support/tls-cert.ts";

const cert = selfSignedCert();

describe.skipIf(cert === null)("TLS failures", () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const { key, cert: pem } = cert as TestCert;
    server = createServer({ key, cert: pem }, (_req, res) => res.end("5"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    cert?.remove();
  });

  it("a self-signed certificate: TlsError naming the code and NODE_EXTRA_CA_CERTS, not retried", async () => {
    const { sleep, delays } = recordingSleep();
    const client = createApiClient(testApiConfig(url, { retries: 3 }), { now: Date.now, sleep });
    try {
      const err = await client.call(operation("scalar.tps"), { pcode: 12 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TlsError);
      const tls = err as TlsError;
      expect(tls.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
      expect(tls.message).toContain(`TLS: ${tls.code}; for a private CA set NODE_EXTRA_CA_CERTS=/path/ca.pem`);
      expect(tls.retryable).toBe(false);
      expect(delays).toEqual([]);
      expect(client.stats.requests).toBe(1);
    } finally {
      await client.close();
    }
  });
});
