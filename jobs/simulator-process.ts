// Starts `apm-sync simulate` as a child process on a free port and reads back its URL and tokens.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

export interface SimulatorProcess {
  readonly url: string;
  readonly accountToken: string;
  readonly projects: { pcode: number; token: string }[];
  readonly pid: number;
  /** The run's environment for its projects: APM_BASE_URL and APM_PROJECTS (no account token). */
  readonly env: { readonly APM_BASE_URL: string; readonly APM_PROJECTS: string };
  /** Resolves with the exit code (null: a signal) when the process ends, whoever ended it. */
  readonly exited: Promise<number | null>;
  stop(): void;
}

/** `nodeArgs`: node's own flags for the simulator (e.g. a heap limit, as the Docker image sets). */
export function startSimulator(args: readonly string[], nodeArgs: readonly string[] = []): Promise<SimulatorProcess> {
  const child = spawn(process.execPath, [...nodeArgs, join(packageRoot(), "bin", "apm-sync.js"), "simulate", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // A bench that fails (an engine run that exits 1, an error thrown) must not leave the sandbox
  // running: it would hold the terminal's or a pipe's stderr open, and its port.
  const stop = () => child.kill("SIGTERM");
  process.once("exit", stop);
  void exited.then(() => process.off("exit", stop));
  return new Promise((resolve, reject) => {
    let out = "";
    child.on("error", reject);
    const early = (code: number | null) => reject(new Error(`simulate exited (${code}) before it was ready:\n${out}`));
    child.on("exit", early);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!out.includes("Ctrl-C stops the server.")) return;
      const url = /listening on (\S+)/.exec(out)?.[1];
      const accountToken = /account token: (\S+)/.exec(out)?.[1];
      const projects = [...out.matchAll(/^project (\d+) \(.*\): (\S+)$/gm)].map((m) => ({ pcode: Number(m[1]), token: m[2]! }));
      if (!url || !accountToken || projects.length === 0) return reject(new Error(`unexpected simulate output:\n${out}`));
      child.off("exit", early);
      const env = { APM_BASE_URL: url, APM_PROJECTS: projects.map((p) => `${p.pcode}:${p.token}`).join(",") };
      resolve({ url, accountToken, projects, pid: child.pid!, env, exited, stop });
    });
  });
}
