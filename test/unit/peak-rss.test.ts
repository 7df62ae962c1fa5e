// The peak resident set the memory tests read from a child (jobs/peak-rss.mjs): the
// child's own, not its parent's. A parent holding 300 MB spawns a small child: getrusage's
// ru_maxrss in the child counts the parent's memory at the fork (Linux carries it over the exec),
// so a test worker grown large made a bounded child look over its bound.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readPeaks } from "../../jobs/peak-rss-lines.ts";

const PRELOAD = fileURLToPath(new URL("../../jobs/peak-rss.mjs", import.meta.url));
const PARENT_MB = 300;

// The parent: holds PARENT_MB, then runs a child with the preload, and prints its own peak (ru_maxrss, KiB).
const PARENT = `
const held = Buffer.alloc(${PARENT_MB} * 1024 * 1024, 1);
const r = require("node:child_process").spawnSync(process.execPath, ["-e", "0"], { env: { ...process.env, NODE_OPTIONS: "--import " + process.argv[1] }, stdio: "inherit" });
console.log(r.status === 0 && held[0] === 1 ? process.resourceUsage().maxRSS : "failed");
`;

describe("the peak resident set a child records", () => {
  const dir = mkdtempSync(join(tmpdir(), "apm-peak-rss-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(!existsSync("/proc/self/status"))("is its own, not the memory its parent held when it forked it", () => {
    const file = join(dir, "rss.txt");
    const parent = spawnSync(process.execPath, ["-e", PARENT, PRELOAD], {
      env: { ...process.env, PEAK_RSS_FILE: file },
      encoding: "utf8",
    });
    expect(parent.status, parent.stderr).toBe(0);
    const parentKib = Number(parent.stdout.trim());
    expect(parentKib).toBeGreaterThan(PARENT_MB * 1024);
    const lines = readPeaks(file);
    expect(lines).toHaveLength(1);
    const childKib = lines[0]!.kib;
    // A bare node process: tens of MB (measured: 40 MB), where ru_maxrss said 311 MB.
    expect(childKib).toBeGreaterThan(1024);
    expect(childKib).toBeLessThan(150 * 1024);
  });

  it("is read back a line a process, in the order they exited, and a line that is not one is refused", () => {
    const file = join(dir, "lines.txt");
    writeFileSync(file, "101 2048 node a.js --x\n102 4096 node b.js\n");
    expect(readPeaks(file)).toEqual([
      { pid: 101, kib: 2048, argv: ["node", "a.js", "--x"] },
      { pid: 102, kib: 4096, argv: ["node", "b.js"] },
    ]);
    writeFileSync(file, "101 2048 node a.js\nKilled\n");
    expect(() => readPeaks(file)).toThrow(/not a peak line: Killed/);
    // A line cut after its pid is no peak of 0 KiB.
    writeFileSync(file, "101 2048 node a.js\n102 \n");
    expect(() => readPeaks(file)).toThrow(/not a peak line: 102 $/);
  });
});
