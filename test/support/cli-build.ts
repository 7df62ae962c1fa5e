// The CLI the integration tests start as child processes: the sources compiled once per test run
// with the build the Docker image ships (jobs/compile.ts), into .test-build/ (same depth as dist/,
// so the package root and its files resolve alike). Under tsx's loader each child spent 1.2-1.6 s
// of CPU transforming the sources again (`status`, measured in an earlier sitting).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileTo } from "../../jobs/compile.ts";

/** Repository root (the CLI resolves its jobs relative to it). */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The compiled CLI's entry point (made by `buildCli`, in the integration project's global setup). */
export const BUILT_CLI = join(REPO_ROOT, ".test-build", "src", "cli.js");

/** Compiles src/ and jobs/ into .test-build/, incrementally: a run with nothing changed re-emits nothing. */
export function buildCli(): void {
  compileTo(join(REPO_ROOT, ".test-build"), { incremental: true });
}
