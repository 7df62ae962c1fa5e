// A PgBouncer in front of the test server, for the tests of apm-sync behind a connection pooler:
// one process, two databases on it pooled in session and in transaction mode. Needs the
// `pgbouncer` binary (Debian's package; `.ci/run` installs it): pgbouncerBinary() says where.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { unusedPort } from "./http-server.ts";
import { waitFor } from "./wait-for.ts";

export type PoolMode = "session" | "transaction";

export interface PgBouncer {
  /** A URL through the pooler to the test database, pooled in `mode`. */
  url(mode: PoolMode): string;
  stop(): Promise<void>;
}

/** The pgbouncer binary on PATH or where Debian puts it; null when there is none. */
export function pgbouncerBinary(): string | null {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  return dirs.map((d) => join(d, "pgbouncer")).find((p) => existsSync(p)) ?? null;
}

/** Whether something accepts connections on `port` of 127.0.0.1. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = tcpConnect(port, "127.0.0.1", () => {
      c.end();
      resolve(true);
    }).on("error", () => resolve(false));
  });
}

/** Starts PgBouncer in front of `databaseUrl`'s server and database (trust from the client, the URL's credentials to the server). */
export async function startPgBouncer(binary: string, databaseUrl: string): Promise<PgBouncer> {
  const server = new URL(databaseUrl);
  const user = decodeURIComponent(server.username || "postgres");
  const target = [
    `host=${server.hostname}`,
    `port=${server.port || "5432"}`,
    `dbname=${decodeURIComponent(server.pathname.slice(1))}`,
    `user=${user}`,
    ...(server.password ? [`password=${decodeURIComponent(server.password)}`] : []),
  ].join(" ");
  const dir = await mkdtemp(join(tmpdir(), "apm-pgbouncer-"));
  const port = await unusedPort();
  const ini = join(dir, "pgbouncer.ini");
  await writeFile(join(dir, "users.txt"), `"${user}" ""\n`);
  await writeFile(
    ini,
    [
      "[databases]",
      ...(["session", "transaction"] as const).map((mode) => `${mode} = ${target} pool_mode=${mode}`),
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "max_client_conn = 200",
      "default_pool_size = 30",
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root: as root it is started as nobody, who must read its files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) for (const path of [dir, ini, join(dir, "users.txt")]) await chmod(path, path === dir ? 0o755 : 0o644);
  const child: ChildProcess = spawn(binary, [...(asRoot ? ["-u", "nobody"] : []), ini], { stdio: ["ignore", "ignore", "pipe"] });
  // Its log is kept until it listens (to say why it did not), then read and dropped: a full pipe would stop it.
  let stderr: string | null = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => {
    if (stderr !== null) stderr += c;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitFor(`pgbouncer listening on ${port}`, () => accepts(port));
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${(e as Error).message}\n${stderr}`);
  }
  stderr = null;
  return {
    url: (mode) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${mode}`,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
