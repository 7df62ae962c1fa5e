// Schema drift: a whole response whose envelope does not match the catalogue. Never retried (house
// rule 4): the window fails and is fetched again by a later run, after someone looked at it.
import type { z } from "zod";
import { terminalSafe } from "../util/terminal-text.ts";

/**
 * One line per issue: `records.0.okind: expected a number, got "0,"`. Keys and quoted values are
 * the server's: their control characters are escaped (the line is logged and stored in the ledger).
 */
export function describeIssues(error: z.ZodError, limit = 5): string {
  const lines = error.issues
    .slice(0, limit)
    .map((issue) => terminalSafe(`${issue.path.map(String).join(".") || "(body)"}: ${issue.message}`));
  const more = error.issues.length - lines.length;
  return more > 0 ? `${lines.join("; ")}; and ${more} more` : lines.join("; ");
}

/** The envelope of a response failed its schema; the whole window fails. */
export class SchemaDriftError extends Error {
  override readonly name = "SchemaDriftError";
  constructor(
    readonly opId: string,
    override readonly cause: unknown,
    detail?: string,
  ) {
    super(`response of ${opId} does not match its schema: ${detail ?? describeCause(cause)}`, { cause });
  }
}

function describeCause(cause: unknown): string {
  if (cause && typeof cause === "object" && "issues" in cause) return describeIssues(cause as z.ZodError);
  return cause instanceof Error ? cause.message : String(cause);
}
