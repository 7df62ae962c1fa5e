// The heap limits the docs promise (docs/operating.md "Memory": the old space's, and the young
// generation's semi-spaces): `npm run cli` and `npm run demo` run the CLI with them, and the Docker
// image sets them in NODE_OPTIONS after its install step. The first case runs `npm run -s cli`
// itself with a preload that reports the heap limit of each Node process it starts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";

const read = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");
const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
const LIMIT_FLAG = /--max-old-space-size=(\d+)/;
const SEMI_FLAG = /--max-semi-space-size=(\d+)/;
const flagOf = (flag: RegExp, text: string | undefined) => Number(flag.exec(text ?? "")?.[1] ?? Number.NaN);
const limitOf = (text: string | undefined) => flagOf(LIMIT_FLAG, text);
const semiOf = (text: string | undefined) => flagOf(SEMI_FLAG, text);
const memory = read("docs/operating.md")
  .split(/^## /m)
  .find((section) => section.startsWith("Memory\n"));
const docLimit = limitOf(memory);
const docSemi = semiOf(memory);

describe("the documented heap limit", () => {
  it("is the CLI's under npm run cli (the process that runs src/cli.ts)", () => {
    const dir = mkdtempSync(join(tmpdir(), "apm-heap-"));
    try {
      const preload = join(dir, "report-heap.cjs");
      writeFileSync(
        preload,
        `process.stderr.write("heap-limit " + process.argv.slice(1).join(" ") + " :: " + require("node:v8").getHeapStatistics().heap_size_limit + "\\n");\n`,
      );
      const r = spawnSync("npm", ["run", "-s", "cli", "--", "--version"], {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_OPTIONS: `--require ${preload}` },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      const cli = r.stderr.split("\n").find((l) => l.startsWith("heap-limit ") && l.includes("src/cli.ts"));
      expect(cli, r.stderr).toBeDefined();
      const bytes = Number(cli!.split(" :: ")[1]);
      // V8 adds its young generation (three semi-spaces' worth) to the old space's limit: with
      // Node's default semi-spaces (16 MiB) it would be 48 MiB, not 24.
      expect(bytes / 2 ** 20).toBeGreaterThanOrEqual(docLimit);
      expect(bytes / 2 ** 20).toBeLessThanOrEqual(docLimit + 3 * docSemi);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is the demo's, and the Docker image's once its install has run", () => {
    expect(docLimit).toBeGreaterThan(0);
    expect(docSemi).toBeGreaterThan(0);
    for (const script of [scripts.cli, scripts.demo]) {
      expect(limitOf(script)).toBe(docLimit);
      expect(semiOf(script)).toBe(docSemi);
    }
    const image = read("Dockerfile")
      .split(/^FROM /m)
      .pop()!;
    const env = /^ENV NODE_OPTIONS=(.+)$/m.exec(image);
    expect(limitOf(env?.[1])).toBe(docLimit);
    expect(semiOf(env?.[1])).toBe(docSemi);
    // Building the embedded template (npm ci's postinstall) needs more than the CLI.
    expect(image.indexOf(env![0])).toBeGreaterThan(image.lastIndexOf("RUN npm ci"));
  });
});

// src/util/heap-growth.ts: under that limit V8 would let the old space grow by about 1.6x between
// full collections (measured with the CLI's call taken out); the CLI sets 2x at its start. A
// preload makes the same objects at the CLI's exit (a sliding window of 150,000 small objects,
// which keeps promoting), and reads each full collection's old space from V8's GC profiler.
const CHURN = `
const { GCProfiler } = require("node:v8");
function churn() {
  const profiler = new GCProfiler();
  profiler.start();
  const keep = [];
  for (let i = 0; i < 1500000; i++) {
    keep.push({ a: i, b: "x" + i, c: [i, i + 1] });
    if (keep.length > 150000) keep.splice(0, 1000);
  }
  const full = profiler.stop().statistics.filter((s) => s.gcType === "MarkSweepCompact");
  const old = (s, when) => s[when].heapSpaceStatistics.find((x) => x.spaceName === "old_space").spaceUsedSize;
  const growth = full.slice(1).map((s, i) => old(s, "beforeGC") / old(full[i], "afterGC"));
  process.stderr.write("old-space-growth " + JSON.stringify(growth) + "\\n");
}
if (process.argv.some((a) => a.endsWith("src/cli.ts"))) process.on("exit", churn);
`;

describe("the CLI's heap between full collections", () => {
  it("lets the old space double, where V8 would take about 1.6x under the limit", () => {
    const dir = mkdtempSync(join(tmpdir(), "apm-heap-"));
    try {
      const preload = join(dir, "churn.cjs");
      writeFileSync(preload, CHURN);
      const r = spawnSync("npm", ["run", "-s", "cli", "--", "--version"], {
        cwd: REPO_ROOT,
        env: { ...process.env, NODE_OPTIONS: `--require ${preload}` },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      const line = r.stderr.split("\n").find((l) => l.startsWith("old-space-growth "));
      const growth = JSON.parse(line!.slice("old-space-growth ".length)) as number[];
      expect(growth.length, r.stderr).toBeGreaterThanOrEqual(2);
      const median = [...growth].sort((a, b) => a - b)[Math.floor(growth.length / 2)]!;
      expect(median, r.stderr).toBeGreaterThanOrEqual(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
