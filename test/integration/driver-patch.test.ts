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

// Shared by the connection scenarios: a socket (postgres.js's `socket` option) over TCP that a
// scenario can close as a stream does (`destroy`: 'close' on the next tick, before a write waiting
// for setImmediate) or reset (`cut`: 'error', the reactions to it, then 'close' with hadError).
const PREAMBLE = `
import net from "node:net";
import { Duplex } from "node:stream";
export function tunnel(url) {
  const { hostname, port } = new URL(url);
  const tcp = net.connect(Number(port || 5432), hostname);
  const d = new Duplex({
    write(c, _e, cb) { tcp.write(c, cb); },
    read() {},
    final(cb) { tcp.end(); cb(); },
    destroy(err, cb) { tcp.destroy(); cb(err); },
  });
  tcp.on("data", (c) => d.push(c));
  tcp.on("close", () => d.destroy());
  tcp.on("error", () => {});
  Object.defineProperty(d, "readyState", { get: () => (d.destroyed ? "closed" : "open") });
  d.cut = () => {
    d.emit("error", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
    process.nextTick(() => { d.emit("close", true); tcp.destroy(); });
  };
  return d;
}
export const within = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(r, ms, "hung"))]);
/** Microtask turns only: nothing scheduled with setImmediate runs meanwhile. */
export const turns = async (n = 20) => { for (let i = 0; i < n; i++) await null; };
`;

const TUNNELED = `
const { tunnel, within, turns } = await import("./preamble.mjs");
let current;
const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10, socket: () => (current = tunnel(url)) });
`;

// A new connection reset while it fetches the array types (the first statement postgres.js sends on
// it, before the caller's): the promise of that query was dropped, and its rejection ended the
// process (upstream issues 1192, 1205, 1223). Here the process counts unhandled rejections instead.
const TYPES_CUT = `
const { tunnel, within } = await import("./preamble.mjs");
let unhandled = 0;
process.on("unhandledRejection", () => unhandled++);
let cuts = 0;
const socket = () => {
  const d = tunnel(url);
  const write = d.write.bind(d);
  d.write = (chunk, ...rest) => {
    if (cuts === 0 && String(chunk).includes("typcategory")) {
      cuts++;
      setImmediate(() => d.cut());
      return true;
    }
    return write(chunk, ...rest);
  };
  return d;
};
const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10, socket });
console.log(await within(sql\`select 1 as x\`.then(() => "first answered", (e) => "first rejected " + e.code), 3000));
console.log(await within(sql\`select array[1, 2]::int[] as a\`.then((r) => "then " + JSON.stringify(r[0].a), (e) => "failed " + e.code), 3000));
await new Promise((r) => setTimeout(r, 100));
console.log("unhandled " + unhandled);
`;

// The patch's `prelude` (db/driver/session.ts: each new connection's settings): each connection
// runs it once, before its first query, a connection made again after its backend was ended runs
// it again, and a prelude that fails fails the query waiting for it and ends its connection, so no
// statement runs without it (the next query's connection runs it again, and fails too). The
// prelude here counts its runs in a setting of the session.
const PRELUDE = `
const { within } = await import("./preamble.mjs");
const count = "select set_config('apm.prelude', (coalesce(nullif(current_setting('apm.prelude', true), ''), '0')::int + 1)::text, false)";
const sql = postgres(url, { max: 2, onnotice: () => {}, prelude: count });
const admin = postgres(url, { max: 1, onnotice: () => {} });
const read = () => sql\`select current_setting('apm.prelude', true) as runs, pg_backend_pid() as pid, pg_sleep(0.2)\`.then(([r]) => r);
const first = await Promise.all([read(), read()]);
console.log("runs " + JSON.stringify(first.map((r) => r.runs)) + ", backends " + new Set(first.map((r) => r.pid)).size);
await admin\`select pg_terminate_backend(pid) from pg_stat_activity where pid in \${admin(first.map((r) => r.pid))}\`;
await new Promise((r) => setTimeout(r, 300));
const again = await Promise.all([read(), read()]).catch(() => Promise.all([read(), read()]));
console.log("after the backends ended " + JSON.stringify(again.map((r) => r.runs)));
const failing = postgres(url, { max: 1, onnotice: () => {}, prelude: "select 1/0" });
const tries = [failing\`select 7 as x\`, failing\`select 8 as x\`].map((q) => within(q.then(([r]) => "ran " + r.x, (e) => "rejected " + e.code), 3000));
console.log("failing prelude, then " + (await Promise.all(tries)).join(", "));
await Promise.all([sql.end(), admin.end(), failing.end()]);
`;

// A query whose bytes wait for the write timer, and the connection closes first: the timer was
// cleared but not forgotten, so no later write was flushed (LanternOps/breeze#3225).
const STALE_TIMER = `${TUNNELED}
await sql\`select 1\`;
const second = sql\`select 2\`.execute().then(() => "answered", (e) => "rejected " + e.code);
await turns();
current.destroy();
console.log(await second);
console.log(await within(sql\`select 3 as x\`.then((r) => "then " + r[0].x, (e) => "failed " + e.code), 3000));
`;

// A statement in flight when the connection is reset, and one sent in reaction to its error (as a
// transaction sends its rollback) before the connection reports closed: that one never settled.
const REACTION = `${TUNNELED}
await sql\`select 1\`;
const first = sql\`select pg_sleep(0.2)\`.execute();
const reaction = first.then(
  () => "answered",
  () => within(sql\`select 'reaction' as x\`.execute().then(() => "reaction answered", (e) => "reaction rejected " + e.code), 3000),
);
await turns();
current.cut();
console.log(await reaction);
console.log(await within(sql\`select 3 as x\`.then((r) => "then " + r[0].x, (e) => "failed " + e.code), 3000));
`;

// The transaction's connection is lost while its code still runs, and the pool reconnects for
// another query: the transaction's next statement ran there, outside the transaction.
const OUTSIDE_TRANSACTION = `${TUNNELED}
const table = "driver_tx_" + process.pid;
await sql.unsafe(\`create table \${table} (x int)\`);
let late;
const tx = sql.begin(async (t) => {
  await t\`select 1\`;
  current.cut();
  await new Promise((r) => setTimeout(r, 300));
  late = t.unsafe(\`insert into \${table} values (1)\`).then(() => "ran", (e) => "rejected " + e.code);
  await late;
}).then(() => "committed", (e) => "rejected " + e.code);
await new Promise((r) => setTimeout(r, 100));
await sql\`select 1\`;
console.log("transaction " + (await tx));
await new Promise((r) => setTimeout(r, 400));
console.log("late statement " + (await late));
console.log("rows " + (await sql.unsafe(\`select count(*)::int as n from \${table}\`))[0].n);
await sql.unsafe(\`drop table \${table}\`);
`;

// Every finished COPY FROM STDIN is destroyed by its stream's autoDestroy, and the driver's
// destroy sent a CopyFail after the CopyDone: one wasted socket write per COPY (the server ignores
// it). A COPY destroyed before its end must still be failed.
const COPY_FAIL_AFTER_DONE = `
const net = await import("node:net");
let fails = 0;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  if (Buffer.isBuffer(chunk) && chunk[0] === 0x66) fails++;
  return write.call(this, chunk, ...rest);
};
const sql = postgres(url, { max: 1, onnotice: () => {} });
await sql\`create temp table t (x int)\`;
for (let i = 0; i < 3; i++) {
  const stream = await sql.unsafe("copy t (x) from stdin").writable();
  stream.write(i + "\\n");
  stream.end();
  await new Promise((resolve, reject) => {
    stream.once("finish", resolve);
    stream.once("error", reject);
  });
}
await new Promise((r) => setTimeout(r, 100));
console.log("copy fails sent " + fails);
const open = await sql.unsafe("copy t (x) from stdin").writable();
open.on("error", (e) => console.log("destroyed copy: " + e.message));
open.write("7\\n");
open.destroy(new Error("stopped"));
await new Promise((r) => setTimeout(r, 100));
const [{ n }] = await sql\`select count(*)::int as n from t\`;
console.log("copy fails sent " + fails + ", rows " + n);
await sql.end();
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
 * The installed driver with the hunks of one fix left out: the hunks whose text holds one of
 * `markers`. Returns the path of its entry point. Fails when a marker is in no hunk.
 */
async function driverWithout(base: string, name: string, ...markers: string[]): Promise<string> {
  const dir = join(base, name);
  await cp(join(REPO_ROOT, "node_modules", "postgres"), join(dir, "node_modules", "postgres"), { recursive: true });
  expect(await applyPatch(dir, PATCH, true)).toBe(0);
  const files = (await readFile(PATCH, "utf8")).split(/^(?=diff --git )/m);
  const hunks = files.flatMap((file) => file.split(/^(?=@@ )/m).slice(1));
  for (const marker of markers) expect(hunks.filter((h) => h.includes(marker)).length, `hunks holding "${marker}"`).toBeGreaterThan(0);
  const kept = files.map((file) => {
    const [head, ...own] = file.split(/^(?=@@ )/m);
    const keep = own.filter((h) => !markers.some((m) => h.includes(m)));
    return keep.length > 0 ? head + keep.join("") : "";
  });
  const partial = join(base, `${name}.patch`);
  await writeFile(partial, kept.join(""));
  expect(await applyPatch(dir, partial, false)).toBe(0);
  const source = (
    await Promise.all(["connection.js", "index.js"].map((f) => readFile(join(dir, "node_modules", "postgres", "src", f), "utf8")))
  ).join("");
  for (const marker of markers) expect(source).not.toContain(marker);
  return join(dir, "node_modules", "postgres", "src", "index.js");
}

/** One fix of the patch: its scenario's output on the driver without the fix, and on the installed one. */
interface Fix {
  readonly defect: string;
  readonly scenario: string;
  /** Text found only in the fix's hunks. */
  readonly markers: readonly string[];
  readonly without: readonly string[];
  readonly patched: readonly string[];
}

const FIXES: readonly Fix[] = [
  {
    defect: "a COPY FROM STDIN the server refuses: it never settled, the transaction stayed open and aborted",
    scenario: REFUSED_COPY,
    markers: ["a COPY FROM STDIN refused after its last row"],
    without: ["hung", "aborted transactions 1"],
    patched: ["rejected 22P02", "then 1"],
  },
  {
    defect: "a finished COPY FROM STDIN: a CopyFail was written after its CopyDone",
    scenario: COPY_FAIL_AFTER_DONE,
    markers: ["a CopyFail sent"],
    without: ["copy fails sent 3", "destroyed copy: stopped", "copy fails sent 4, rows 3"],
    patched: ["copy fails sent 0", "destroyed copy: stopped", "copy fails sent 1, rows 3"],
  },
  {
    defect: "a connection closed while a write waits for its timer: nothing was sent again, the next query hung",
    scenario: STALE_TIMER,
    markers: ["(as LanternOps/breeze#3225)"],
    without: ["rejected CONNECTION_CLOSED", "hung"],
    patched: ["rejected CONNECTION_CLOSED", "then 3"],
  },
  {
    defect: "a statement sent in reaction to a reset connection's error: it never settled",
    scenario: REACTION,
    markers: ["after an 'error' close, a query the caller sent"],
    without: ["hung", "then 3"],
    patched: ["reaction rejected CONNECTION_CLOSED", "then 3"],
  },
  {
    defect: "a transaction's statement after its connection was lost: it ran outside the transaction",
    scenario: OUTSIDE_TRANSACTION,
    markers: ["the error the transaction's connection closed with", "once the connection closed it goes back to the pool"],
    without: ["transaction rejected CONNECTION_CLOSED", "late statement ran", "rows 1"],
    patched: ["transaction rejected CONNECTION_CLOSED", "late statement rejected CONNECTION_CLOSED", "rows 0"],
  },
  {
    defect: "a statement each new connection runs before any other (the `prelude` option): unknown to the driver",
    scenario: PRELUDE,
    markers: ["`prelude`, a statement each new connection runs once", "a `prelude` that failed fails the query waiting for it"],
    without: ["runs [null,null], backends 2", "after the backends ended [null,null]", "failing prelude, then ran 7, ran 8"],
    patched: ['runs ["1","1"], backends 2', 'after the backends ended ["1","1"]', "failing prelude, then rejected 22012, rejected 22012"],
  },
  {
    defect: "a new connection reset while it fetched the array types: an unhandled rejection",
    scenario: TYPES_CUT,
    markers: ["the promise of the array types' query"],
    without: ["first rejected ECONNRESET", "then [1,2]", "unhandled 1"],
    patched: ["first rejected ECONNRESET", "then [1,2]", "unhandled 0"],
  },
];

describe("postgres.js patches", () => {
  let t: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), "apm-driver-"));
    await writeFile(join(dir, "preamble.mjs"), PREAMBLE);
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

  describe.each(FIXES.map((f, i) => ({ ...f, i })))("$defect", (fix) => {
    it("shows on the driver without the fix", async () => {
      const driver = await driverWithout(dir, `without-${fix.i}`, ...fix.markers);
      const r = await run(dir, fix.scenario, driver, t.url);
      expect({ code: r.code, out: r.out }, r.err).toEqual({ code: 0, out: fix.without });
    });

    it("does not on the installed, patched driver", async () => {
      const r = await run(dir, fix.scenario, INSTALLED, t.url);
      expect({ code: r.code, out: r.out }, r.err).toEqual({ code: 0, out: fix.patched });
    });
  });
});
