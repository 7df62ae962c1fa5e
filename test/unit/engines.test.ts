// The Node versions package.json's `engines` admits are the ones every installed package admits:
// `npm install` on the lowest of them must not warn that a package needs a newer Node (vega-lite
// 6.5.0 once needed 22 while `engines` said 20). Read from the lockfile, which holds each package's
// own `engines`, so that the check covers what `npm ci` installs, dependencies of dependencies too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/child-sync.ts";

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: { readonly node?: string };
}

const read = <T>(file: string) => JSON.parse(readFileSync(join(REPO_ROOT, file), "utf8")) as T;
const ours = read<{ engines: { node: string } }>("package.json").engines.node;
const lock = read<{ packages: Record<string, LockEntry> }>("package-lock.json");

/** Packages whose `engines.node` does not admit `version`, as "path (range)". */
function refusing(version: string, entries: [string, LockEntry][]): string[] {
  return entries
    .filter(([path, e]) => path !== "" && e.engines?.node && !semver.satisfies(version, e.engines.node))
    .map(([path, e]) => `${path} (${e.engines!.node})`);
}

describe("engines", () => {
  const lowest = semver.minVersion(ours)!.version;
  const entries = Object.entries(lock.packages);

  it("every installed package admits the lowest Node that package.json admits", () => {
    expect(entries.filter(([, e]) => e.engines?.node).length).toBeGreaterThan(50);
    expect(refusing(lowest, entries)).toEqual([]);
  });

  it("the check finds a package that needs a newer Node", () => {
    const newer: [string, LockEntry] = ["node_modules/vega-lite", { version: "6.5.0", engines: { node: ">=22" } }];
    expect(refusing(lowest, [...entries, newer])).toEqual(["node_modules/vega-lite (>=22)"]);
  });
});
