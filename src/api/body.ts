// Reading error bodies within a size limit, and telling an error object on a 200 from data.
import type { Readable } from "node:stream";
import type { Secret } from "../util/secret.ts";
import { type ApiErrorContext, AuthError, ErrorBodyError, excerpt } from "./errors.ts";

/**
 * Reads the whole body, or stops (destroying the stream, so the socket is not reused half-read)
 * as soon as it exceeds `limit` bytes: returns null then.
 */
export async function readLimited(body: Readable, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      discard(body);
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Destroys a body we will not read. undici's body emits an AbortError when destroyed without one:
 * swallow it here, it is the intended outcome, not a failure to report.
 */
export function discard(body: Readable): void {
  body.on("error", () => undefined);
  body.destroy();
}

export interface InterpretContext {
  readonly ctx: ApiErrorContext;
  readonly secrets: readonly Secret[];
  readonly tokenHeader: string;
}

const DATA_KEYS = ["data", "records", "objects", "series"];

/** `{"msg":..,"code":..}` or `{"error":..}` without any data key: an error object. */
export function isErrorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  if (DATA_KEYS.some((k) => k in o)) return false;
  return "error" in o || ("msg" in o && "code" in o) || isNoContent(o);
}

export function isNoContent(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  return Number(o.code) === 204 && Object.keys(o).every((k) => ["code", "result", "msg", "message"].includes(k));
}

/** Token errors (`{"msg":"[F] Invalid token","code":400}`, code 401/403) are fatal AuthErrors. */
export function rejectErrorObject(parsed: unknown, raw: string, ic: InterpretContext): void {
  if (!isErrorObject(parsed)) return;
  const text = [parsed.msg, parsed.error, parsed.message]
    .filter((v) => v !== undefined)
    .map(String)
    .join(" ");
  const code = Number(parsed.code);
  if (/token/i.test(text) || code === 401 || code === 403) {
    throw new AuthError(`the server answered ${excerpt(raw, 120, ic.secrets)}`, ic.ctx, {
      secrets: ic.secrets,
      tokenHeader: ic.tokenHeader,
    });
  }
  // A server-side code in the body (500, 503, 429) is the same transient failure as that status.
  throw new ErrorBodyError(raw, ic.ctx, { secrets: ic.secrets, code: Number.isFinite(code) ? code : undefined });
}
