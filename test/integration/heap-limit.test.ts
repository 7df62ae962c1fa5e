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
