// jobs/simulator-process.ts: a bench that dies (an error thrown, an engine run that failed) takes its
// sandbox with it, rather than leaving it running with the bench's stderr and its port held.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.ts";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it("stops the sandbox when the process that started it dies of an error", async () => {
  const module = pathToFileURL(join(packageRoot(), "jobs", "simulator-process.ts")).href;
  const code = `const { startSimulator } = await import(${JSON.stringify(module)});
    const s = await startSimulator(["--seed", "1", "--projects", "1", "--burst-keys", "0"]);
    console.log("sandbox " + s.pid);
    throw new Error("the bench failed");`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: packageRoot(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.resume();
  const exitCode = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(exitCode).toBe(1);
  const pid = Number(/sandbox (\d+)/.exec(out)?.[1]);
  expect(pid).toBeGreaterThan(0);
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
  expect(alive(pid)).toBe(false);
}, 60_000);
