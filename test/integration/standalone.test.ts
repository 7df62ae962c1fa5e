// The repository stands alone (issue 32 item 5): no tracked file points into the workspace's shared
// folder next to the checkout, which a clone does not have. The samples the tests read are in
// test/fixtures; the design and API notes are docs/.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";

// Spelled in pieces so that this file does not hold the string it looks for.
const SIBLING = ["..", "shared"].join("/");

function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: REPO_ROOT, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  return out.split("\0").filter(Boolean);
}

/** Tracked files that hold `needle`, with the first line that does. */
function mentions(files: readonly string[], needle: string): string[] {
  const found: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
    const at = lines.findIndex((line) => line.includes(needle));
    if (at >= 0) found.push(`${file}:${at + 1}: ${lines[at]!.trim()}`);
  }
  return found;
}

describe("the repository stands alone", () => {
  const files = trackedFiles();

  it("lists the tracked files, fixtures and docs among them", () => {
    expect(files).toContain("package.json");
    expect(files).toContain("docs/design.md");
    expect(files.some((f) => f.startsWith("test/fixtures/api-samples/") && f.endsWith(".json"))).toBe(true);
  });

  it(`no tracked file mentions ${SIBLING}`, () => {
    expect(mentions(files, SIBLING)).toEqual([]);
  });

  it("the search finds a mention where there is one", () => {
    expect(mentions(["test/integration/standalone.test.ts"], "Spelled in pieces")).toHaveLength(1);
    expect(mentions(["test/integration/standalone.test.ts"], SIBLING)).toEqual([]);
  });
});
