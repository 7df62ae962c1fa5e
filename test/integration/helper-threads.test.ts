// A process that opens a Postgres server runs its helper threads (V8's collector and compiler
// workers) ten nice steps below its JavaScript thread (src/util/helper-threads.ts, called by
// db/driver/connect.ts); one on the embedded database leaves them as they are. Read from /proc,
// so Linux only; each case in a child process of its own, whose threads are its own.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { HELPER_NICE_STEP } from "../../src/util/helper-threads.ts";
import { packageRoot } from "../../src/util/package-root.ts";

const linux = process.platform === "linux";

interface Threads {
  readonly lowered?: number;
  /** The main thread's nice, and the others'. */
  readonly main: number;
  readonly others: number[];
}

/** Runs `body` (module code, with `nices()` in scope) in a child under tsx and returns what it printed. */
function inChild(body: string): Threads {
  const script = `
    import { readdirSync, readFileSync } from "node:fs";
    const nice = (tid) => { const s = readFileSync("/proc/self/task/" + tid + "/stat", "utf8"); return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[16]); };
    const nices = () => { const all = readdirSync("/proc/self/task").map((t) => [Number(t), nice(t)]);
      return { main: all.find(([t]) => t === process.pid)[1], others: all.filter(([t]) => t !== process.pid).map(([, n]) => n) }; };
    ${body}`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: packageRoot(), encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Threads;
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!linux)("the helper threads' priority", () => {
  it("helpersYieldToMain lowers every thread but the main one by HELPER_NICE_STEP, and says how many", () => {
    const t = inChild(`
      import { helpersYieldToMain } from "./src/util/helper-threads.ts";
      const lowered = helpersYieldToMain();
      process.stdout.write(JSON.stringify({ lowered, ...nices() }));`);
    // Node starts V8's platform workers with the process: there are helpers to lower.
    expect(t.others.length).toBeGreaterThan(0);
    expect(t.lowered).toBe(t.others.length);
    expect(t.main).toBe(0);
    expect(t.others).toEqual(t.others.map(() => HELPER_NICE_STEP));
  });

  it("is done when a Postgres server is opened", () => {
    const t = inChild(`
      import { openDatabase } from "./src/db/driver/connect.ts";
      const before = nices();
      const db = await openDatabase({ databaseUrl: ${JSON.stringify(inject("adminUrl"))}, dataDir: "", dbSchema: "public" });
      await db.sql\`SELECT 1\`;
      const after = nices();
      await db.close();
      process.stdout.write(JSON.stringify({ ...after, lowered: before.others.filter((n) => n !== 0).length }));`);
    expect(t.lowered).toBe(0);
    expect(t.main).toBe(0);
    // V8's four platform workers at least (Node's default pool).
    expect(t.others.filter((n) => n === HELPER_NICE_STEP).length).toBeGreaterThanOrEqual(4);
  });

  it("is not done on the embedded database, whose engine runs on the JavaScript thread", () => {
    const dir = mkdtempSync(join(tmpdir(), "apm-nice-"));
    dirs.push(dir);
    const t = inChild(`
      import { openDatabase } from "./src/db/driver/connect.ts";
      const db = await openDatabase({ databaseUrl: null, dataDir: ${JSON.stringify(dir)}, dbSchema: "apm" });
      await db.sql\`SELECT 1\`;
      const after = nices();
      await db.close();
      process.stdout.write(JSON.stringify(after));`);
    expect(t.main).toBe(0);
    expect(t.others.length).toBeGreaterThan(0);
    expect(t.others.filter((n) => n !== 0)).toEqual([]);
  });
});
