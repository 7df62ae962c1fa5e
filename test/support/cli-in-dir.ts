// Runs `apm-sync` from the repository's sources with another working directory (the demo keeps
// its embedded database under ./.apm-sync of the directory it is started in).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { childEnv, REPO_ROOT } from "./child-sync.ts";

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCliIn(
  cwd: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  timeoutMs = 180_000,
): Promise<CliResult> {
  // The package bin registers tsx relative to itself, so it runs from any working directory.
  const child = spawn(process.execPath, [join(REPO_ROOT, "bin", "apm-sync.js"), ...args], {
    cwd,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding("utf8").on("data", (s: string) => {
    stderr += s;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
