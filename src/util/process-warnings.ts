// Node's own warnings (a deprecation in a dependency, too many listeners on a signal) go through
// the command's logger while it runs, as warn records with their name and code, instead of Node's
// text lines on stderr: with --log-format json, stderr stays JSON lines to the last one. Node
// prints warnings from a 'warning' listener of its own; it is set aside while a logger is routed
// and put back after the last one ends. A process runs one command; should two overlap in one
// process, the newer one's logger gets the warnings until it ends.
import type { Logger } from "pino";

type WarningListener = (warning: Error) => void;

const routed: Logger[] = [];
let setAside: WarningListener[] = [];

function logWarning(warning: Error): void {
  const code = (warning as { code?: unknown }).code;
  routed.at(-1)?.warn({ warning: warning.name, ...(typeof code === "string" ? { code } : {}) }, warning.message);
}

/** Sends process warnings to `logger` until the returned function is called. */
export function routeProcessWarnings(logger: Logger): () => void {
  if (routed.length === 0) {
    setAside = process.listeners("warning") as WarningListener[];
    process.removeAllListeners("warning");
    process.on("warning", logWarning);
  }
  routed.push(logger);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    routed.splice(routed.lastIndexOf(logger), 1);
    if (routed.length > 0) return;
    process.off("warning", logWarning);
    for (const listener of setAside) process.on("warning", listener);
    setAside = [];
  };
}
