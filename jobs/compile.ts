// The benches time the engine compiled (tsc, as the Dockerfile builds it), not under tsx.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

/** Compiles the project (tsconfig.build.json) into `outDir`; exits the process when tsc fails. */
export function compileTo(outDir: string): void {
  const root = packageRoot();
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  const build = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", outDir], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(1);
}
