// The memory flags `npm run cli` gives Node (package.json's `cli` script: the old space's limit
// and the young generation's semi-spaces, docs/operating.md "Memory"), read from the script
// itself, so that the benches and tests that run the CLI as users do cannot drift from it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

const MEMORY_FLAG = /--max-(?:old|semi)-space-size=\d+/g;

/** The `--max-*-space-size` flags of the `cli` script, in its order. */
export function cliMemoryFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { scripts: Record<string, string> };
  const flags = pkg.scripts.cli?.match(MEMORY_FLAG) ?? [];
  if (flags.length === 0) throw new Error("package.json: the cli script sets no --max-*-space-size flag");
  return flags;
}
