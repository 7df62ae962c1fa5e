// The CLI the integration tests start as child processes: the sources compiled once per test run
// with the build the Docker image ships (`tsc -p tsconfig.build.json`), into .test-build/ (same
// depth as dist/, so the package root and its files resolve alike). Under tsx's loader every child
// spent 1.2-1.6 s of CPU transforming the sources again, and the suite starts hundreds of them.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (the CLI resolves its jobs relative to it). */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BUILD_DIR = join(REPO_ROOT, ".test-build");

/** The compiled CLI's entry point (made by `buildCli`, in the integration project's global setup). */
export const BUILT_CLI = join(BUILD_DIR, "src", "cli.js");

/**
 * Compiles src/ and jobs/ into .test-build/ (incremental: a run with nothing changed re-emits
 * nothing). Type errors do not stop it (the typecheck is its own CI step and tsc still emits);
 * a build that leaves no entry point does.
 */
export function buildCli(): void {
  const tsc = createRequire(join(REPO_ROOT, "package.json")).resolve("typescript/bin/tsc");
  const args = ["-p", "tsconfig.build.json", "--outDir", BUILD_DIR, "--incremental", "--tsBuildInfoFile", join(BUILD_DIR, ".tsbuildinfo")];
  const r = spawnSync(process.execPath, [tsc, ...args], { cwd: REPO_ROOT, encoding: "utf8" });
  if (r.status !== 0) process.stderr.write(`test build: tsc reported errors (the suite runs what it emitted):\n${r.stdout}${r.stderr}`);
  if (!existsSync(BUILT_CLI)) throw new Error(`test build: ${BUILT_CLI} was not emitted (tsc exit ${r.status})`);
}
