// The CLI's helper threads (V8's collector and compiler workers) run ten nice steps below its
// JavaScript thread (src/util/helper-threads.ts). Read from /proc, so Linux only.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimulatorProcess, startSimulator } from "../../jobs/simulator-process.ts";
import { HELPER_NICE_STEP } from "../../src/util/helper-threads.ts";
import { packageRoot } from "../../src/util/package-root.ts";

const linux = process.platform === "linux";

/** A thread's nice value from its stat line (the 19th field; the command name may hold spaces). */
function niceOf(pid: number, tid: string): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** Each thread of `pid` and its nice value. */
function threadNices(pid: number): Map<number, number> {
  return new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [Number(tid), niceOf(pid, tid)]));
}

describe.skipIf(!linux)("the helper threads' priority", () => {
  it("lowers every thread but the main one by HELPER_NICE_STEP, and says how many", () => {
    const script = `
      import { readdirSync, readFileSync } from "node:fs";
      import { helpersYieldToMain } from "./src/util/helper-threads.ts";
      const lowered = helpersYieldToMain();
      const nice = (tid) => { const s = readFileSync("/proc/self/task/" + tid + "/stat", "utf8"); return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[16]); };
      const threads = readdirSync("/proc/self/task").map((tid) => [Number(tid), nice(tid)]);
      process.stdout.write(JSON.stringify({ pid: process.pid, lowered, threads }));`;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: packageRoot(),
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const { pid, lowered, threads } = JSON.parse(r.stdout) as { pid: number; lowered: number; threads: [number, number][] };
    const main = threads.find(([tid]) => tid === pid)![1];
    const others = threads.filter(([tid]) => tid !== pid);
    // Node starts V8's platform workers with the process: there are helpers to lower.
    expect(others.length).toBeGreaterThan(0);
    expect(lowered).toBe(others.length);
    expect(main).toBe(0);
    expect(others.map(([, n]) => n)).toEqual(others.map(() => HELPER_NICE_STEP));
  });

  describe("in the CLI", () => {
    let sim: SimulatorProcess;
    beforeAll(async () => {
      sim = await startSimulator(["--projects", "1"]);
    }, 60_000);
    afterAll(() => sim?.stop());

    it("runs its helpers below its JavaScript thread from the start", () => {
      const nices = threadNices(sim.pid);
      expect(nices.get(sim.pid)).toBe(0);
      const lowered = [...nices].filter(([tid, n]) => tid !== sim.pid && n === HELPER_NICE_STEP);
      // V8's four platform workers at least (Node's default pool); threads the main thread started
      // later (libuv's pool) keep its priority.
      expect(lowered.length).toBeGreaterThanOrEqual(4);
    });
  });
});
