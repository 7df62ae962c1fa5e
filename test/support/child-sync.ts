// Runs the real CLI (the sources compiled for this test run: cli-build.ts) as a child process, for the tests that
// kill it (crash safety), read its exit code (faults) or run two at once (overlap). The sandbox
// stays in the test process, so everything here is asynchronous: a blocking spawnSync would stop
// the sandbox from answering the child.
import { type ChildProcess, spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll } from "vitest";
import { BUILT_CLI, REPO_ROOT } from "./cli-build.ts";

// CLI children still running when their test file ends are killed. A test that fails before it
// stops its children (workers waiting for jobs, a sandbox) would otherwise leave them running for
// good, against a database the harness has dropped, loading the machine under every later test.
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill("SIGKILL");
};
afterAll(killRunning);
process.once("exit", killRunning);

export { REPO_ROOT };

export interface ChildExit {
  /** Exit code; null when a signal ended the process. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

export interface ChildRun {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves when the process has exited and its pipes are drained. */
  readonly exited: Promise<ChildExit>;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Sends `signal` (default SIGKILL) to this child only and waits for its exit. */
  kill(signal?: NodeJS.Signals): Promise<ChildExit>;
}

export interface SpawnOptions {
  /** Killed with SIGKILL after this long (default 120 s): a hung child must not hang the suite. */
  readonly timeoutMs?: number;
  /** Working directory (default: the repository); the demo keeps its database under ./.apm-sync. */
  readonly cwd?: string;
  /** A module loaded before the CLI (`--import`), e.g. to inject a fault into the process. */
  readonly preload?: string;
  /** Run as this user and group (a test run by root that needs a user permissions apply to). */
  readonly user?: { readonly uid: number; readonly gid: number };
}

// The child must not inherit the test runner's APM_* settings or its database.
const DROP = /^(APM_|DATABASE_URL$|VITEST|NODE_OPTIONS$)/;

/** The parent environment without APM_*, DATABASE_URL and vitest variables, plus `env`. */
export function childEnv(env: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !DROP.test(k)));
  return { ...base, ...env };
}

/** Starts `apm-sync <args>` with exactly the APM settings in `env`. */
export function spawnCli(args: readonly string[], env: Readonly<Record<string, string>>, opts: SpawnOptions = {}): ChildRun {
  const started = performance.now();
  // This run's build of the sources (never a stale dist/), from any working directory.
  const preload = opts.preload ? ["--import", pathToFileURL(opts.preload).href] : [];
  const child = spawn(process.execPath, [...preload, BUILT_CLI, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    ...(opts.user ?? {}),
  });
  if (child.pid === undefined) throw new Error("could not start the CLI child process");
  running.add(child);
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => {
    out += s;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    err += s;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
  const exited = new Promise<ChildExit>((resolve, reject) => {
    child.once("error", reject);
    // "close" (not "exit"): the pipes are drained, so stdout/stderr are complete.
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, signal, stdout: out, stderr: err, durationMs: Math.round(performance.now() - started) });
    });
  });
  return {
    child,
    pid: child.pid,
    exited,
    stdout: () => out,
    stderr: () => err,
    kill: (signal: NodeJS.Signals = "SIGKILL") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `apm-sync <args>` to its end. */
export function runCli(args: readonly string[], env: Readonly<Record<string, string>>, opts: SpawnOptions = {}): Promise<ChildExit> {
  return spawnCli(args, env, opts).exited;
}

/**
 * Resolves once `ready()` is true (checked every `everyMs`), or rejects when the child exits
 * first; the tests use it to kill the child at a chosen point (e.g. after K sandbox requests).
 */
export function waitUntil(run: ChildRun, ready: () => boolean, everyMs = 5): Promise<"ready" | "exited"> {
  return new Promise((resolve) => {
    let done = false;
    const timer = setInterval(() => {
      if (!done && ready()) {
        done = true;
        clearInterval(timer);
        resolve("ready");
      }
    }, everyMs);
    void run.exited.then(() => {
      if (done) return;
      done = true;
      clearInterval(timer);
      resolve("exited");
    });
  });
}

/** Environment of a CLI run against a sandbox and a test database (fast governor for tests). */
export function cliEnv(opts: {
  readonly baseUrl: string;
  readonly databaseUrl: string;
  readonly projects: readonly { pcode: number; token: string }[];
  readonly accountToken?: string;
  readonly extra?: Readonly<Record<string, string>>;
}): Record<string, string> {
  return {
    APM_BASE_URL: opts.baseUrl,
    DATABASE_URL: opts.databaseUrl,
    APM_DB_SCHEMA: "apm",
    APM_PROJECTS: opts.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    ...(opts.accountToken ? { APM_ACCOUNT_TOKEN: opts.accountToken } : {}),
    APM_RPS: "1000",
    APM_CONCURRENCY: "16",
    APM_LOG_FORMAT: "plain",
    APM_LOG_LEVEL: "info",
    ...opts.extra,
  };
}
