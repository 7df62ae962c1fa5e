// How a run ends when the scheduler ends it (Kubernetes, systemd, `docker stop`: SIGTERM; a
// terminal: SIGINT): no new window is started, windows in flight get APM_SHUTDOWN_GRACE to finish,
// the rest are abandoned (their transactions roll back), the run is marked `cancelled`, the summary
// is printed and the process exits 143 or 130. A second signal exits at once. And the last resort:
// an exception nobody caught is logged, the run marked `failed`, and the process exits 1.
import { setMaxListeners } from "node:events";
import type { Logger } from "./util/logger.ts";

export interface Shutdown {
  /** Aborted at the first signal: take no new work. */
  readonly stopping: AbortSignal;
  /** Aborted when the grace is over: abandon what is in flight. */
  readonly hardStop: AbortSignal;
  /** 143 (SIGTERM) or 130 (SIGINT) once a signal came; null otherwise. */
  exitCode(): number | null;
  dispose(): void;
}

const CODES = { SIGTERM: 143, SIGINT: 130 } as const;

export function installShutdown(logger: Logger, graceMs: number): Shutdown {
  const stopping = new AbortController();
  const hardStop = new AbortController();
  // Every window and database step in flight listens to these: far more than the default 10.
  setMaxListeners(0, stopping.signal, hardStop.signal);
  let code: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  const onSignal = (signal: keyof typeof CODES) => {
    if (code !== null) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(CODES[signal]);
    }
    code = CODES[signal];
    logger.warn(`${signal}: finishing the windows in flight (up to ${Math.round(graceMs / 1000)} s, APM_SHUTDOWN_GRACE), then stopping`);
    stopping.abort();
    timer = setTimeout(() => hardStop.abort(), graceMs);
    timer.unref();
  };
  const term = () => onSignal("SIGTERM");
  const int = () => onSignal("SIGINT");
  process.on("SIGTERM", term);
  process.on("SIGINT", int);
  return {
    stopping: stopping.signal,
    hardStop: hardStop.signal,
    exitCode: () => code,
    dispose: () => {
      clearTimeout(timer);
      process.off("SIGTERM", term);
      process.off("SIGINT", int);
    },
  };
}

/** The run in progress, so that the last-resort handler can mark it failed. */
let current: { mark: () => Promise<void> } | null = null;

export function setCurrentRun(run: { mark: () => Promise<void> } | null): void {
  current = run;
}

/** Installs the handlers of the last resort (once per process). */
export function installLastResort(logger: Logger): void {
  const fatal = (kind: string) => (e: unknown) => {
    logger.error(`${kind}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}; marking the run failed and exiting`);
    const mark = current?.mark() ?? Promise.resolve();
    const timeout = new Promise((resolve) => setTimeout(resolve, 3_000).unref());
    void Promise.race([mark.catch(() => {}), timeout]).finally(() => process.exit(1));
  };
  process.on("uncaughtException", fatal("uncaught exception"));
  process.on("unhandledRejection", fatal("unhandled rejection"));
}
