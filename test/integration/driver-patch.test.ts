// The postgres.js defects patched in patches/postgres+3.4.9.patch, each shown on the driver with
// its hunk left out (the patch reversed on a copy of the installed driver, then applied again
// without the hunks of that fix) and on the installed, patched driver.
import { spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const PATCH = join(REPO_ROOT, "patches", "postgres+3.4.9.patch");
const INSTALLED = join(REPO_ROOT, "node_modules", "postgres", "src", "index.js");

// Upstream issues 1154 and 1208: a reserved connection, its backend terminated (as a failover
// does), then one more query on it: `nextWrite` throws a TypeError outside any promise.
const LOST_CONNECTION = `
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
`;

// Issue 21: a COPY FROM STDIN whose data the server refuses, inside a transaction. The server
// answers ErrorResponse and ReadyForQuery; the query resolved with the stream already, and the
// stream waited for a CommandComplete that never came: the transaction stayed open and aborted.
const REFUSED_COPY = `
const sql = postgres(url, { max: 1, onnotice: () => {} });
const admin = postgres(url, { max: 1, onnotice: () => {} });
const stuck = () => admin\`select count(*)::int as n from pg_stat_activity
  where datname = current_database() and state = 'idle in transaction (aborted)'\`.then(([r]) => r.n);
const copy = sql.begin(async (tx) => {
  await tx\`create temp table t (x int)\`;
  const query = tx.unsafe("copy t (x) from stdin");
  const stream = await query.writable();
  stream.write("1\\nnot a number\\n");
  stream.end();
  await new Promise((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
    query.catch(reject);
  });
});
const outcome = await Promise.race([
  copy.then(() => "committed", (e) => "rejected " + e.code),
  new Promise((r) => setTimeout(r, 3000, "hung")),
]);
console.log(outcome);
if (outcome === "hung") console.log("aborted transactions " + (await stuck()));
else console.log("then " + (await sql\`select 1 as x\`)[0].x);
await admin.end();
`;

/** Runs `scenario` with the driver at `driver` against `url`; its output lines. */
async function run(
  dir: string,
  scenario: string,
  driver: string,
  url: string,
): Promise<{ code: number | null; out: string[]; err: string }> {
  const script = join(dir, `scenario-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(
    script,
    `const { default: postgres } = await import(process.argv[2]);\nconst url = process.argv[3];\n${scenario}\nprocess.exit(0);\n`,
  );
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
      resolve({ code, out: out.trim().split("\n"), err });
    });
  });
}

const applyPatch = (dir: string, patch: string, reverse: boolean) =>
  new Promise<number | null>((resolve) => {
    const p = spawn("patch", [...(reverse ? ["-R"] : []), "-p1", "-s", "-d", dir, "-i", patch], { stdio: "inherit" });
    p.on("close", resolve);
  });

/**
 * The installed driver with the hunks of one fix left out: the hunks whose text holds `marker`.
 * Returns the path of its entry point. Fails when no hunk holds the marker.
 */
async function driverWithout(base: string, name: string, marker: string): Promise<string> {
  const dir = join(base, name);
  await cp(join(REPO_ROOT, "node_modules", "postgres"), join(dir, "node_modules", "postgres"), { recursive: true });
  expect(await applyPatch(dir, PATCH, true)).toBe(0);
  const files = (await readFile(PATCH, "utf8")).split(/^(?=diff --git )/m);
  let dropped = 0;
  const kept = files.map((file) => {
    const [head, ...hunks] = file.split(/^(?=@@ )/m);
    const keep = hunks.filter((h) => !h.includes(marker));
    dropped += hunks.length - keep.length;
    return keep.length > 0 ? head + keep.join("") : "";
  });
  expect(dropped, `hunks holding "${marker}"`).toBeGreaterThan(0);
  const partial = join(base, `${name}.patch`);
  await writeFile(partial, kept.join(""));
  expect(await applyPatch(dir, partial, false)).toBe(0);
  const source = await readFile(join(dir, "node_modules", "postgres", "src", "connection.js"), "utf8");
  expect(source).not.toContain(marker);
  return join(dir, "node_modules", "postgres", "src", "index.js");
}

describe("postgres.js patches", () => {
  let t: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "apm-driver-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await t?.drop();
  });

  describe("nextWrite after the socket closed", () => {
    it("crashes the driver without the fix with an uncaught TypeError", async () => {
      const driver = await driverWithout(dir, "no-next-write", "a write scheduled with setImmediate can run");
      const r = await run(dir, LOST_CONNECTION, driver, t.url);
      expect(r.code).not.toBe(0);
      expect(r.err).toContain("Cannot read properties of null (reading 'write')");
      expect(r.out).not.toContain("survived");
    });

    it("rejects the query with CONNECTION_CLOSED on the patched driver, and the process goes on", async () => {
      const r = await run(dir, LOST_CONNECTION, INSTALLED, t.url);
      expect({ code: r.code, out: r.out }, r.err).toEqual({ code: 0, out: ["rejected CONNECTION_CLOSED", "survived"] });
    });
  });

  describe("a COPY FROM STDIN the server refuses", () => {
    it("never settles on the driver without the fix; the transaction stays open and aborted", async () => {
      const driver = await driverWithout(dir, "no-copy-error", "a COPY FROM STDIN refused after its last row");
      const r = await run(dir, REFUSED_COPY, driver, t.url);
      expect({ code: r.code, out: r.out }, r.err).toEqual({ code: 0, out: ["hung", "aborted transactions 1"] });
    });

    it("rejects with the server's error on the patched driver, and the connection serves the next query", async () => {
      const r = await run(dir, REFUSED_COPY, INSTALLED, t.url);
      expect({ code: r.code, out: r.out }, r.err).toEqual({ code: 0, out: ["rejected 22P02", "then 1"] });
    });
  });
});
