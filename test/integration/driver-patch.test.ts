// The postgres.js defects patched in patches/postgres+3.4.9.patch (upstream issues 1154 and 1208,
// still open): a query on a pinned (reserved) connection whose backend died schedules a write that
// runs after the socket closed, and `nextWrite` throws a TypeError outside any promise: no
// try/catch can stop it, the process dies. The unpatched driver (the patch reversed on a copy of
// the installed one) is shown to crash; the installed, patched driver rejects the query instead.
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const PATCH = join(REPO_ROOT, "patches", "postgres+3.4.9.patch");

// A reserved connection, its backend terminated (as a failover does), then one more query on it.
const SCENARIO = `
const { default: postgres } = await import(process.argv[2]);
const url = process.argv[3];
const sql = postgres(url, { max: 2, onnotice: () => {} });
const admin = postgres(url, { max: 1, onnotice: () => {} });
const pinned = await sql.reserve();
const [{ pid }] = await pinned\`select pg_backend_pid() as pid\`;
await admin\`select pg_terminate_backend(\${pid})\`;
await new Promise((r) => setTimeout(r, 300));
try {
  await pinned\`select 1\`;
  console.log("answered");
} catch (e) {
  console.log("rejected " + e.code);
}
await new Promise((r) => setTimeout(r, 300));
console.log("survived");
await admin.end();
process.exit(0);
`;

function run(script: string, driver: string, url: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, pathToFileURL(driver).href, url], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe("postgres.js nextWrite after the socket closed", () => {
  let t: TestDatabase;
  let dir: string;
  let script: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "apm-driver-"));
    script = join(dir, "scenario.mjs");
    await writeFile(script, SCENARIO);
    // The unpatched driver: a copy of the installed one with our patch reversed.
    await cp(join(REPO_ROOT, "node_modules", "postgres"), join(dir, "node_modules", "postgres"), { recursive: true });
    const reversed = await new Promise<number | null>((resolve) => {
      const p = spawn("patch", ["-R", "-p1", "-s", "-d", dir, "-i", PATCH], { stdio: "inherit" });
      p.on("close", resolve);
    });
    expect(reversed).toBe(0);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t?.drop();
  });

  it("crashes the unpatched driver with an uncaught TypeError", async () => {
    const source = await readFile(join(dir, "node_modules", "postgres", "src", "connection.js"), "utf8");
    expect(source).not.toContain("apm-sync patch");
    const r = await run(script, join(dir, "node_modules", "postgres", "src", "index.js"), t.url);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("Cannot read properties of null (reading 'write')");
    expect(r.out).not.toContain("survived");
  });

  it("rejects the query with CONNECTION_CLOSED on the patched driver, and the process goes on", async () => {
    const r = await run(script, join(REPO_ROOT, "node_modules", "postgres", "src", "index.js"), t.url);
    expect({ code: r.code, out: r.out.trim().split("\n") }, r.err).toEqual({ code: 0, out: ["rejected CONNECTION_CLOSED", "survived"] });
  });
});
