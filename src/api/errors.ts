// Typed errors of the HTTP layer. Every message is redacted with all configured secrets before it
// is stored, so `message`, `stack`, `JSON.stringify` and `util.inspect` are safe to log.
import { redact, type Secret } from "../util/secret.ts";
import { terminalSafe } from "../util/terminal-text.ts";

/** Where an error happened. `path` is path + query without any credential. */
export interface ApiErrorContext {
  readonly opId: string;
  readonly pcode?: number | undefined;
  readonly path: string;
  /** 1-based attempt number of the request that failed; 0 when nothing was sent. */
  readonly attempt: number;
}

export interface ApiErrorOptions {
  readonly cause?: unknown;
  /** Every configured token; the message is redacted with them. */
  readonly secrets?: readonly Secret[];
}

const SNIPPET_MAX = 300;

/** Base class: something went wrong talking to the Open API. */
export class ApiError extends Error {
  readonly opId: string;
  readonly pcode: number | undefined;
  readonly path: string;
  readonly attempt: number;
  /** Whether the retry layer may try again (one decision, read by src/api/retry.ts). */
  readonly retryable: boolean = false;

  constructor(message: string, ctx: ApiErrorContext, opts: ApiErrorOptions = {}) {
    const where = `${ctx.opId}${ctx.pcode !== undefined ? ` (project ${ctx.pcode})` : ""} ${ctx.path}`;
    const secrets = opts.secrets ?? [];
    // A message is one line: what the server sent in it (a Location, an encoding) cannot break it.
    super(terminalSafe(redact(`${message} [${where}]`, secrets)), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.opId = ctx.opId;
    this.pcode = ctx.pcode;
    this.path = redact(ctx.path, secrets);
    this.attempt = ctx.attempt;
  }
}

/** A non-2xx answer not covered by a more specific class. 5xx and 408 are retryable. */
export class HttpStatusError extends ApiError {
  override readonly retryable: boolean;
  /** First 300 characters of the body, redacted. */
  readonly bodySnippet: string;
  /** Server-requested wait (Retry-After), ms. */
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly status: number,
    body: string,
    ctx: ApiErrorContext,
    opts: ApiErrorOptions & { retryAfterMs?: number | undefined; message?: string } = {},
  ) {
    const snippet = snippetOf(body, opts.secrets);
    super(opts.message ?? `HTTP ${status}${snippet ? `: ${snippet}` : ""}`, ctx, opts);
    this.bodySnippet = snippet;
    this.retryAfterMs = opts.retryAfterMs;
    this.retryable = status === 408 || status === 429 || status >= 500;
  }
}

/** HTTP 429: the server wants us to slow down. Retryable; halves the governor's rate. */
export class RateLimitedError extends HttpStatusError {}

/**
 * 401/403, or a body saying the token is invalid (`{"msg":"[F] Invalid token","code":400}`).
 * Retrying with the same token cannot help; the client tries the operation's other token where
 * the spec leaves the token open, and only then reports the refusal.
 */
export class AuthError extends ApiError {
  readonly status: number | undefined;
  /** The token kinds the server refused for this operation (empty: none was configured). */
  readonly refused: readonly ("project" | "account")[];
  constructor(
    reason: string,
    ctx: ApiErrorContext,
    opts: ApiErrorOptions & { status?: number | undefined; tokenHeader?: string; refused?: readonly ("project" | "account")[] } = {},
  ) {
    const who = ctx.pcode !== undefined ? `project ${ctx.pcode}` : "the account";
    const header = opts.tokenHeader ? ` and that the header names match the server (token header now "${opts.tokenHeader}")` : "";
    const which = opts.refused && opts.refused.length > 0 ? opts.refused.map((k) => `the ${k} token`).join(" and ") : `the token of ${who}`;
    super(`authentication failed for ${who} on ${ctx.opId}: ${reason}. Check ${which}${header}`, ctx, opts);
    this.status = opts.status;
    this.refused = opts.refused ?? [];
  }
}

/** Connection refused/reset, timeout, truncated body. Retryable. */
export class TransportError extends ApiError {
  override readonly retryable = true;
  /** Node/undici error code when known (ECONNRESET, UND_ERR_SOCKET, TIMEOUT, ...). */
  readonly code: string | undefined;
  /** The server's answer had begun (status and headers came) before it failed: the server is reachable. */
  readonly answered: boolean;
  constructor(message: string, ctx: ApiErrorContext, opts: ApiErrorOptions & { code?: string | undefined; answered?: boolean } = {}) {
    super(message, ctx, opts);
    this.code = opts.code;
    this.answered = opts.answered === true;
  }
}

/**
 * The server's certificate was not accepted (expired, self-signed, unknown issuer, wrong name).
 * Not retryable: the next attempt meets the same certificate. A company CA is added with
 * NODE_EXTRA_CA_CERTS, which Node reads at start-up.
 */
export class TlsError extends ApiError {
  /** The TLS error code (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ...). */
  readonly code: string;
  constructor(code: string, ctx: ApiErrorContext, opts: ApiErrorOptions = {}) {
    super(`TLS: ${code}; for a private CA set NODE_EXTRA_CA_CERTS=/path/ca.pem`, ctx, opts);
    this.code = code;
  }
}

/** A 200 whose JSON body is an error object (`{"msg":..,"code":..}` or `{"error":..}`), not data. */
export class ErrorBodyError extends ApiError {
  readonly bodySnippet: string;
  /** Retryable when the body's own `code` is 408, 429 or 5xx (`{"msg":"temporarily unavailable","code":500}`). */
  override readonly retryable: boolean;
  constructor(body: string, ctx: ApiErrorContext, opts: ApiErrorOptions & { code?: number | undefined } = {}) {
    const snippet = snippetOf(body, opts.secrets);
    super(`the server answered 200 with an error body: ${snippet}`, ctx, opts);
    this.bodySnippet = snippet;
    const code = opts.code;
    this.retryable = code !== undefined && (code === 408 || code === 429 || code >= 500);
  }
}

/** The body exceeded api.maxResponseBytes; the request was aborted. Not retryable. */
export class ResponseTooLargeError extends ApiError {
  constructor(
    readonly limit: number,
    ctx: ApiErrorContext,
    opts: ApiErrorOptions = {},
  ) {
    super(`response larger than the limit of ${limit} bytes (api.maxResponseBytes); narrow the window or raise the limit`, ctx, opts);
  }
}

/**
 * An answer within the body cap that holds more than the process keeps of one answer in memory
 * at once (a record or an envelope beyond APM_MAX_RECORD_BYTES, or millions of records): the
 * window fails alone, the message names the setting. Not retryable: the same answer comes back.
 */
export class AnswerTooLargeError extends ApiError {}

/**
 * A 2xx body sent with a Content-Encoding (gzip, deflate, br) although none was asked for: not
 * inflated (a compressed bomb expands without bound) and not read as text. Retryable: one bad
 * node or proxy behind a balancer does it, the next attempt may meet another.
 */
export class EncodedBodyError extends ApiError {
  override readonly retryable = true;
  constructor(
    readonly encoding: string,
    ctx: ApiErrorContext,
    opts: ApiErrorOptions = {},
  ) {
    super(
      `the server sent a ${snippetOf(encoding, opts.secrets).slice(0, 40)}-encoded body, which was not asked for; not decoded`,
      ctx,
      opts,
    );
  }
}

/** A JSON operation answered with something that is not JSON (HTML error page, truncated JSON). Retryable. */
export class NonJsonBodyError extends ApiError {
  override readonly retryable = true;
  readonly bodySnippet: string;
  constructor(body: string, ctx: ApiErrorContext, opts: ApiErrorOptions = {}) {
    const snippet = snippetOf(body, opts.secrets);
    super(`expected a JSON body, got: ${snippet}`, ctx, opts);
    this.bodySnippet = snippet;
  }
}

/**
 * A wait the retry layer would not make: a Retry-After beyond its cap (a 503 saying "come back
 * tomorrow"), or a window whose waits are used up. The message gives the server's stated time;
 * `cause` is the answer that asked for the wait. Not retryable.
 */
export class GaveUpWaitingError extends ApiError {
  readonly status: number | undefined;
  constructor(reason: string, last: ApiError) {
    const status = last instanceof HttpStatusError ? last.status : undefined;
    super(`${reason}; last answer: ${status !== undefined ? `HTTP ${status}` : last.name}`, last, { cause: last });
    this.status = status;
  }
}

/**
 * A 200 whose body is not an answer where the operation answers a JSON object: empty, `null`,
 * `[]`, a scalar or a "no content" object. No such "no data" form is documented outside event
 * history; taking it for an empty window would record hours `done` whose data never came.
 * Retryable: a healthy server answers the next attempt.
 */
export class EmptyAnswerError extends ApiError {
  override readonly retryable = true;
  constructor(what: string, ctx: ApiErrorContext, opts: ApiErrorOptions = {}) {
    super(`the server answered 200 with ${what} where a JSON object was expected (no data is not an empty answer)`, ctx, opts);
  }
}

// C0 controls but tab/newline, DEL, C1 controls, lone surrogates, U+FFFD: what a binary body
// (a compressed answer read as text) holds; none of it belongs in a log line or the ledger.
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// How much of a body is masked before it is cut to a snippet: a token cut here is masked as cut
// short, and whatever masking shortens, the snippet's first 300 characters come from this part.
const MASK_WINDOW = 64 * 1024;

/**
 * The body's first 300 characters on one line, every unprintable character shown as `?`, the
 * secrets masked before the cut (masked after it, a token across the cut would keep its first
 * characters).
 */
export function snippetOf(body: string, secrets: readonly Secret[] = []): string {
  const flat = body.slice(0, MASK_WINDOW).replace(UNPRINTABLE, "?").replace(/\s+/g, " ").trim();
  return clip(redact(flat, secrets), SNIPPET_MAX);
}

/** The first `max` characters of a server's text for a message, the secrets masked before the cut. */
export function excerpt(text: string, max: number, secrets: readonly Secret[]): string {
  return clip(redact(text.slice(0, MASK_WINDOW), secrets), max);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
