// The heap limit the docs promise (docs/operating.md "Memory"): `npm run cli` and `npm run demo` run the CLI
// with it, and the Docker image sets it in NODE_OPTIONS after its install step. The first case runs
// `npm run -s cli` itself with a preload that reports the heap limit of each Node process it starts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";

const read = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");
const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
const LIMIT_FLAG = /--max-old-space-size=(\d+)/;
const limitOf = (text: string | undefined) => Number(LIMIT_FLAG.exec(text ?? "")?.[1] ?? Number.NaN);
const docLimit = limitOf(/^## Memory\n[\s\S]*?--max-old-space-size=\d+/m.exec(read("docs/operating.md"))?.[0]);

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
      // V8 adds its young generation (a few MiB to a few tens) to the old space's limit.
      expect(bytes / 2 ** 20).toBeGreaterThanOrEqual(docLimit);
      expect(bytes / 2 ** 20).toBeLessThan(docLimit + 64);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is the demo's, and the Docker image's once its install has run", () => {
    expect(docLimit).toBeGreaterThan(0);
    expect(limitOf(scripts.cli)).toBe(docLimit);
    expect(limitOf(scripts.demo)).toBe(docLimit);
    const image = read("Dockerfile")
      .split(/^FROM /m)
      .pop()!;
    const env = /^ENV NODE_OPTIONS=(\S+)$/m.exec(image);
    expect(limitOf(env?.[1])).toBe(docLimit);
    // Building the embedded template (npm ci's postinstall) needs more than the CLI.
    expect(image.indexOf(env![0])).toBeGreaterThan(image.lastIndexOf("RUN npm ci"));
  });
});
