// Reading and interpreting response bodies: size limit, JSON vs text/plain, error bodies on a 200.
import type { Readable } from "node:stream";
import type { OperationDef } from "../catalogue/types.ts";
import { answersObject } from "../schemas/envelope.ts";
import { parseJson } from "../schemas/json.ts";
import type { Secret } from "../util/secret.ts";
import { type ApiErrorContext, AuthError, EmptyAnswerError, ErrorBodyError, excerpt, NonJsonBodyError } from "./errors.ts";

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

/**
 * The value of a 2xx body. json: parsed bigint-safe; an empty body is `[]` where the operation
 * answers a bare array (event history answers empty bodies for no data), and an error
 * (EmptyAnswerError, retried) where it answers an object. text: the trimmed raw text (scalars
 * `5`, `93.07`, `"66.0"`). Either way a JSON error object on a 200 is an error, not data
 * (API-NOTES "Errors").
 */
export function interpretBody(op: OperationDef, text: string, ic: InterpretContext): unknown {
  const trimmed = text.trim();
  if (op.format === "text") {
    if (trimmed.startsWith("{")) rejectErrorObject(tryParse(trimmed), trimmed, ic);
    return trimmed;
  }
  const object = answersObject(op.envelope);
  if (trimmed === "") {
    if (object) throw new EmptyAnswerError("an empty body", ic.ctx, { secrets: ic.secrets });
    return [];
  }
  const parsed = tryParse(trimmed);
  if (parsed === NOT_JSON) throw new NonJsonBodyError(trimmed, ic.ctx, { secrets: ic.secrets });
  // Event history may answer {"code":204,"result":"no content"} for "no data" (API-NOTES): only
  // bare-array operations get [] for it; an operation answering an object has no such form.
  if (isNoContent(parsed) && op.records?.at === null) return [];
  if (object && (isNoContent(parsed) || parsed === null || typeof parsed !== "object" || Array.isArray(parsed)))
    throw new EmptyAnswerError(excerpt(trimmed, 40, ic.secrets), ic.ctx, { secrets: ic.secrets });
  rejectErrorObject(parsed, trimmed, ic);
  return parsed;
}

const NOT_JSON = Symbol("not json");

function tryParse(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return NOT_JSON;
  }
}

const DATA_KEYS = ["data", "records", "objects", "series"];

/** `{"msg":..,"code":..}` or `{"error":..}` without any data key: an error object. */
export function isErrorObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  if (DATA_KEYS.some((k) => k in o)) return false;
  return "error" in o || ("msg" in o && "code" in o) || isNoContent(o);
}

function isNoContent(value: unknown): boolean {
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
