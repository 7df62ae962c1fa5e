// Tokens from the environment (`APM_PROJECTS=pcode:token,...`, `APM_ACCOUNT_TOKEN`, their `_FILE`
// variants) and from the file (`projects: [{pcode, token | tokenFile}]`). No message here ever
// holds a token: entries are named by position and project code only.
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { Secret } from "../util/secret.ts";
import { strictObject } from "./strict.ts";

export interface ProjectToken {
  readonly pcode: number;
  readonly token: string;
}

/** The content of a secret file, trimmed; a problem naming the setting when it cannot be read. */
export function readSecretFile(path: string, what: string, problems: string[]): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (e) {
    problems.push(`${what}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    return undefined;
  }
}

/** `VAR` or `VAR_FILE` (Docker/Kubernetes secrets), never both; undefined when neither is set. */
export function secretVar(env: NodeJS.ProcessEnv, name: string, problems: string[]): string | undefined {
  const direct = env[name] || undefined;
  const path = env[`${name}_FILE`] || undefined;
  if (direct && path) problems.push(`${name} and ${name}_FILE are both set; use one`);
  if (path) return readSecretFile(path, `${name}_FILE`, problems);
  return direct;
}

/**
 * Why `token` cannot go into the token header as it is (null: it can), never quoting it. undici
 * refuses a line break, a control character or a character beyond one byte only when the first
 * request is built (UND_ERR_INVALID_ARG); a space or tab no token holds (a server trims it, or it
 * is two values pasted as one).
 */
export function tokenProblem(token: string): string | null {
  const at = token.search(/[^\x21-\x7e\x80-\xff]/);
  if (at < 0) return null;
  const c = token.charCodeAt(at);
  const what =
    c === 0x0a || c === 0x0d
      ? "a line break (CR or LF)"
      : c === 0x20 || c === 0x09
        ? "a space or tab"
        : c < 0x20 || c === 0x7f
          ? "a control character"
          : "a character beyond Latin-1";
  return `holds ${what} at character ${at + 1}, which an HTTP header cannot carry: copy the token again without it`;
}

function pcodeOf(text: string): number | null {
  const pcode = Number(text.trim());
  return /^\d+$/.test(text.trim()) && Number.isSafeInteger(pcode) && pcode > 0 ? pcode : null;
}

/** Project codes listed twice. */
function duplicates(list: readonly ProjectToken[]): number[] {
  return [...new Set(list.filter((p, i) => list.findIndex((q) => q.pcode === p.pcode) !== i).map((p) => p.pcode))];
}

/** `pcode:token,pcode:token`; `name` is the variable the text came from. */
export function parseProjectList(text: string, name: string, problems: string[]): ProjectToken[] {
  const out: ProjectToken[] = [];
  const entries = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  entries.forEach((entry, i) => {
    const where = `${name}: entry ${i + 1}`;
    const idx = entry.indexOf(":");
    const pcode = idx > 0 ? pcodeOf(entry.slice(0, idx)) : null;
    const token = entry.slice(idx + 1);
    if (idx <= 0) problems.push(`${where} is not pcode:token`);
    else if (pcode === null) problems.push(`${where}: the project code must be a positive integer`);
    else if (token === "") problems.push(`${where}: project ${pcode} has no token`);
    // `1001:tok1;1002:tok2` would otherwise be one token for 1001 that the server refuses later.
    else if (/[\s;:|]/.test(token))
      problems.push(
        `${where}: the token of project ${pcode} holds a space, ";", ":" or "|": separate entries with commas (pcode:token,pcode:token)`,
      );
    else if (tokenProblem(token)) problems.push(`${where}: the token of project ${pcode} ${tokenProblem(token)}`);
    else out.push({ pcode, token });
  });
  for (const pcode of duplicates(out)) problems.push(`${name}: project ${pcode} is listed twice`);
  return out;
}

/** The file's `projects`: a token given inline or read from `tokenFile`. */
export const fileProjects = z
  .array(strictObject({ pcode: z.union([z.number(), z.string()]), token: z.string().optional(), tokenFile: z.string().optional() }))
  .transform((list, ctx) => {
    const out: ProjectToken[] = [];
    list.forEach((p, i) => {
      const problems: string[] = [];
      const pcode = pcodeOf(String(p.pcode));
      const token = p.tokenFile ? readSecretFile(p.tokenFile, "tokenFile", problems) : p.token;
      if (pcode === null) problems.push("pcode: must be a positive integer");
      else if (p.token !== undefined && p.tokenFile !== undefined) problems.push("token and tokenFile are both set; use one");
      else if (!token && problems.length === 0) problems.push(`project ${pcode} has no token (set token or tokenFile)`);
      else if (token && tokenProblem(token)) problems.push(`the token of project ${pcode} ${tokenProblem(token)}`);
      for (const message of problems) ctx.addIssue({ code: "custom", path: [i], message });
      if (pcode !== null && token && problems.length === 0) out.push({ pcode, token });
    });
    for (const pcode of duplicates(out)) ctx.addIssue({ code: "custom", message: `project ${pcode} is listed twice` });
    return out;
  });

/** Every configured token, for redaction of error texts. */
export function configuredSecrets(api: {
  readonly accountToken: Secret | null;
  readonly projects: readonly { readonly token: Secret }[];
}): Secret[] {
  return [...(api.accountToken ? [api.accountToken] : []), ...api.projects.map((p) => p.token)];
}
