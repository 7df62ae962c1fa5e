// A configuration problem (exit code 2): every problem found, each naming where the value came
// from (`APM_START`, `config file app.json: start`, `--log-format`).
import type { z } from "zod";

/** A configuration problem; `problems` lists every one found, not just the first. */
export class ConfigError extends Error {
  readonly exitCode = 2;
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** `grains["stat.sql"]`, `projects[0].tokenFile`: a path as one would write it in JavaScript. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => {
      if (typeof p === "number") return `[${p}]`;
      const key = String(p);
      if (/^[A-Za-z_$][\w$]*$/.test(key)) return i === 0 ? key : `.${key}`;
      return `[${JSON.stringify(key)}]`;
    })
    .join("");
}

/**
 * One line per zod issue: `where` names the source, `name` turns the issue's path into the
 * setting's name there (a variable name for the environment). A record key refused by its key
 * schema reports its own message.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], name: (path: readonly PropertyKey[]) => string): string[] {
  return issues.flatMap((issue) => {
    if (issue.code === "invalid_key") return describeIssues(issue.issues, () => name(issue.path));
    return [`${name(issue.path)}: ${issue.message}`];
  });
}
