// The engine compiled (tsc, as the Dockerfile builds it), not under tsx: for the benches, which
// time it, and for the integration tests, which start it as child processes (test/support/cli-build.ts).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

/**
 * Compiles the project (tsconfig.build.json) into `outDir`; throws when tsc fails (its errors are
 * on stderr). `incremental`: re-emits only what changed since the last build into `outDir`.
 */
export function compileTo(outDir: string, opts: { incremental?: boolean } = {}): void {
  const root = packageRoot();
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const incremental = opts.incremental ? ["--incremental", "--tsBuildInfoFile", join(outDir, ".tsbuildinfo")] : [];
  const build = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outDir, ...incremental], {
    cwd: root,
    stdio: "inherit",
  });
  if (build.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${build.status}): see its errors above`);
}
