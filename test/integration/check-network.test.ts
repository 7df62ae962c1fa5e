// The network a real user sits behind: a forward proxy (HTTP_PROXY/HTTPS_PROXY, undici's own
// proxy agent) and a server whose certificate comes from a private CA (NODE_EXTRA_CA_CERTS).
// The real CLI as a child process against the sandbox (default strict profile).
import { request as httpRequest } from "node:http";
import { createServer as createHttpsServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type ForwardProxy, startForwardProxy } from "../support/forward-proxy.ts";
import { unusedPort } from "../support/http-server.ts";
import { selfSignedCert } from "../support/tls-cert.ts";

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ projects: 1, burstKeys: 0 });
});

afterAll(async () => {
  await sandbox?.stop();
});

/** Every variable a proxy could come from, lower case included (the machine's own must not leak in). */
function proxyEnv(proxyUrl: string): Record<string, string> {
  return { HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, NO_PROXY: "", http_proxy: "", https_proxy: "", no_proxy: "" };
}

const requestKeys = (list: readonly { method: string; path: string }[]) => list.map((r) => `${r.method} ${r.path.split("?")[0]}`).sort();

describe("behind a forward proxy", () => {
  let proxy: ForwardProxy;
  let db: TestDatabase;

  beforeAll(async () => {
    // The base URL names a host no resolver knows: only the proxy can reach it.
    proxy = await startForwardProxy({ hosts: { "sandbox.invalid": "127.0.0.1" } });
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  });

  it("check and a short sync send every request through HTTP_PROXY", async () => {
    const [project] = sandbox.projects;
    const env = cliEnv({
      baseUrl: `http://sandbox.invalid:${sandbox.port}`,
      databaseUrl: db.url,
      projects: [project!],
      accountToken: sandbox.accountToken,
      extra: { ...proxyEnv(proxy.url), APM_START: "1h" },
    });
    sandbox.clearLog();
    const check = await runCli(["check", "--json"], env);
    expect(check.code, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout) as { ok: boolean; operations: { status: string }[] };
    expect(report.ok).toBe(true);
    expect(report.operations.filter((o) => o.status === "ok").length).toBeGreaterThan(40);
    expect(check.stdout).not.toContain(sandbox.accountToken);

    const sync = await runCli(["sync", "--streams", "stat.transaction"], env);
    expect(sync.code, sync.stderr).toBe(0);
    const rows = await db.sql`SELECT count(*)::int AS n FROM stat_transaction`;
    expect(rows[0]!.n).toBeGreaterThan(0);

    // undici's ProxyAgent tunnels plain http through CONNECT too (its proxyTunnel default).
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(proxy.tunnels.every((t) => t === `sandbox.invalid:${sandbox.port}`)).toBe(true);
    expect(proxy.requests.length).toBeGreaterThan(40);
    // Request for request, the sandbox saw what went through the proxy, and nothing else.
    expect(requestKeys(sandbox.requestLog)).toEqual(requestKeys(proxy.requests));
  });
});

describe("a server nobody can reach", () => {
  it("check says so for every operation at once, without spending every probe's retries", async () => {
    const port = await unusedPort();
    const env = { APM_BASE_URL: `http://127.0.0.1:${port}`, APM_PROJECTS: "1001:some-T0KEN-1", APM_LOG_FORMAT: "plain", ...proxyEnv("") };
    const run = await runCli(["check", "--json"], env);
    expect(run.code, run.stderr).toBe(1);
    type Op = { pcode: number | null; status: string; message: string };
    const report = JSON.parse(run.stdout) as { serverClockOffsetMs: number | null; operations: Op[]; advice: string[] };
    expect(report.serverClockOffsetMs).toBeNull();
    // Account operations are skipped (no account token); every project operation failed.
    const projectOps = report.operations.filter((op) => op.pcode === 1001);
    expect(projectOps.length).toBeGreaterThan(40);
    for (const op of projectOps) {
      expect(op.status).toBe("error");
      expect(op.message).toContain("ECONNREFUSED");
    }
    expect(run.durationMs).toBeLessThan(30_000);
    // What to check, once, and nothing about windows retried by a next run.
    expect(report.advice).toEqual([
      `could not connect: check the host and port of APM_BASE_URL, that the server is up, and HTTPS_PROXY/NO_PROXY (APM_BASE_URL is http://127.0.0.1:${port})`,
    ]);
    const text = await runCli(["check"], env);
    expect(text.stdout).toMatch(
      /project 1001: \d+ operations error: not sent: \S+ could not reach the server: connection failed: ECONNREFUSED/,
    );
    expect(text.stdout).not.toContain("retried next run");
    expect(text.stdout.match(/check the host and port of APM_BASE_URL/g)).toHaveLength(1);
  });
});

const cert = selfSignedCert();

describe.skipIf(cert === null)("a server certificate from a private CA", () => {
  let server: Server;
  let baseUrl: string;

  beforeAll(async () => {
    // TLS in front of the sandbox, as a company's reverse proxy would be.
    server = createHttpsServer({ key: cert!.key, cert: cert!.cert }, (req, res) => {
      const upstream = httpRequest(
        { host: "127.0.0.1", port: sandbox.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `https://localhost:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    cert?.remove();
  });

  const env = () => ({
    APM_BASE_URL: baseUrl,
    APM_PROJECTS: `${sandbox.projects[0]!.pcode}:${sandbox.projects[0]!.token}`,
    APM_LOG_FORMAT: "plain",
    ...proxyEnv(""),
  });

  it("untrusted: check names the TLS failure and the fix; trusted through NODE_EXTRA_CA_CERTS: ok", async () => {
    const args = ["check", "--json", "--streams", "scalar.tps,stat.transaction"];
    const untrusted = await runCli(args, env());
    expect(untrusted.code, untrusted.stderr).toBe(1);
    const failed = JSON.parse(untrusted.stdout) as { operations: { status: string; message: string }[] };
    expect(failed.operations).toHaveLength(2);
    for (const op of failed.operations) {
      expect(op.status).toBe("error");
      expect(op.message).toMatch(/TLS: [A-Z_]+; for a private CA set NODE_EXTRA_CA_CERTS=\/path\/ca\.pem/);
    }
    // Not retried: a certificate does not change between attempts.
    expect(untrusted.durationMs).toBeLessThan(20_000);

    const trusted = await runCli(args, { ...env(), NODE_EXTRA_CA_CERTS: cert!.certPath });
    expect(trusted.code, trusted.stderr).toBe(0);
    const report = JSON.parse(trusted.stdout) as { operations: { status: string }[] };
    expect(report.operations.map((o) => o.status)).toEqual(["ok", "ok"]);
  });
});
