// The error of a command used wrongly (a flag, a stream name, a range): found before anything is
// requested, printed as it is, exit code 2 (README "Exit codes").
import { ConfigError } from "./config/config-error.ts";
import { createOutput, type LogFormat } from "./util/logger.ts";

/** A usage problem found before anything was requested (exit code 2). */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A configuration or usage problem on stderr: as it is, or as one JSON line. */
export function printProblem(e: ConfigError | UsageError, format: LogFormat): void {
  const problems = e instanceof ConfigError ? e.problems : [e.message];
  const msg = e instanceof ConfigError ? "invalid configuration" : e.message;
  createOutput(format, 2).print(e.message, { msg, problems, exitCode: 2 }, "error");
}
