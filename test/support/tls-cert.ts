// A throw-away self-signed certificate for 127.0.0.1/localhost, made by the openssl command line
// (node:crypto cannot issue certificates). null when openssl is not installed: the caller skips.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCert {
  readonly key: string;
  readonly cert: string;
  /** The certificate as a file: what NODE_EXTRA_CA_CERTS points at (it is its own CA). */
  readonly certPath: string;
  remove(): void;
}

export function selfSignedCert(): TestCert | null {
  const dir = mkdtempSync(join(tmpdir(), "apm-tls-"));
  const keyPath = join(dir, "key.pem");
  const certPath = join(dir, "cert.pem");
  const args = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"];
  const san = ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext", "basicConstraints=critical,CA:TRUE"];
  const made = spawnSync("openssl", [...args, ...san, "-keyout", keyPath, "-out", certPath], { stdio: "ignore" });
  if (made.error || made.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    key: readFileSync(keyPath, "utf8"),
    cert: readFileSync(certPath, "utf8"),
    certPath,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
