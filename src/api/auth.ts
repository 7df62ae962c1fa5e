// Credentials of one request: which token, which header names. The only place a Secret is revealed.
import type { OperationDef, TokenKind } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Secret } from "../util/secret.ts";
import { AuthError } from "./errors.ts";
import { RequestBuildError } from "./request.ts";

type AuthConfig = Pick<Config["api"], "accountToken" | "projects" | "tokenHeader" | "pcodeHeader">;

/**
 * The token kinds to try for an operation, in order, among those configured: `op.token` first,
 * then `op.altToken` (range and series: project token first, as the samples and the hosted
 * service's client send it; the account token the parameter tables name on refusal).
 * Throws AuthError, before anything is sent, when none is configured.
 */
export function tokenCandidates(op: OperationDef, pcode: number | undefined, api: AuthConfig, path: string): TokenKind[] {
  if (op.sendsPcode && pcode === undefined) throw new RequestBuildError(`${op.id}: needs a project code (req.pcode)`);
  const kinds = op.altToken ? [op.token, op.altToken] : [op.token];
  const configured = kinds.filter((k) => tokenOf(k, pcode, api) !== null);
  if (configured.length === 0) {
    const wanted = op.altToken ? `${op.token} or ${op.altToken} token` : `${op.token} token`;
    const how = "set APM_ACCOUNT_TOKEN for the account token, APM_PROJECTS=pcode:token for project tokens";
    throw new AuthError(`no ${wanted} is configured (${how}); nothing was sent`, { opId: op.id, pcode, path, attempt: 0 });
  }
  return configured;
}

/** Headers carrying the token of `kind` (and the project code when the operation sends it). */
export function authHeaders(op: OperationDef, kind: TokenKind, pcode: number | undefined, api: AuthConfig): Record<string, string> {
  const token = tokenOf(kind, pcode, api);
  if (!token) throw new RequestBuildError(`${op.id}: no ${kind} token configured`);
  const headers: Record<string, string> = { [api.tokenHeader]: token.reveal() };
  if (op.sendsPcode) headers[api.pcodeHeader] = String(pcode);
  return headers;
}

function tokenOf(kind: TokenKind, pcode: number | undefined, api: AuthConfig): Secret | null {
  if (kind === "account") return api.accountToken;
  if (pcode === undefined) return null;
  return api.projects.find((p) => p.pcode === pcode)?.token ?? null;
}
