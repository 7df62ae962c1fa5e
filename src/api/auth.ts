// Credentials of one request: which token, which header names. The only place a Secret is revealed.
import type { OperationDef, TokenKind } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import type { Secret } from "../util/secret.ts";
import { AuthError } from "./errors.ts";
import { RequestBuildError } from "./request.ts";

type AuthConfig = Pick<Config["api"], "accountToken" | "projects" | "tokenHeader" | "pcodeHeader">;

/** Every configured token, for redaction of error texts. */
export function configuredSecrets(api: Pick<Config["api"], "accountToken" | "projects">): Secret[] {
  return [...(api.accountToken ? [api.accountToken] : []), ...api.projects.map((p) => p.token)];
}

/**
 * Headers carrying the token (and the project code when the operation sends it). Range and series
 * operations name the account token in the spec's parameter table but the sample requests send the
 * project token (spec "Note on tokens"): `op.altToken` is used when the primary one is missing.
 * Throws AuthError, before anything is sent, when no usable token is configured.
 */
export function authHeaders(op: OperationDef, pcode: number | undefined, api: AuthConfig, path: string): Record<string, string> {
  if (op.sendsPcode && pcode === undefined) throw new RequestBuildError(`${op.id}: needs a project code (req.pcode)`);
  const token = tokenOf(op.token, pcode, api) ?? (op.altToken ? tokenOf(op.altToken, pcode, api) : null);
  if (!token) {
    const wanted = op.altToken ? `${op.token} or ${op.altToken} token` : `${op.token} token`;
    const how = "set APM_ACCOUNT_TOKEN for the account token, APM_PROJECTS=pcode:token for project tokens";
    throw new AuthError(`no ${wanted} is configured (${how}); nothing was sent`, { opId: op.id, pcode, path, attempt: 0 });
  }
  const headers: Record<string, string> = { [api.tokenHeader]: token.reveal() };
  if (op.sendsPcode) headers[api.pcodeHeader] = String(pcode);
  return headers;
}

function tokenOf(kind: TokenKind, pcode: number | undefined, api: AuthConfig): Secret | null {
  if (kind === "account") return api.accountToken;
  if (pcode === undefined) return null;
  return api.projects.find((p) => p.pcode === pcode)?.token ?? null;
}
