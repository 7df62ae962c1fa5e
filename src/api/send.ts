// One HTTP attempt on an undici pool: deadline, size limit, status -> typed error. No retries here.
import type { Dispatcher } from "undici";
import type { OperationDef } from "../catalogue/types.ts";
import { parseJson } from "../schemas/json.ts";
import { discard, type InterpretContext, readLimited, rejectErrorObject } from "./body.ts";
import {
  ApiError,
  AuthError,
  EncodedBodyError,
  HttpStatusError,
  RateLimitedError,
  ResponseTooLargeError,
  TlsError,
  TransportError,
} from "./errors.ts";
import { type Page, type PageLimits, readPage } from "./page.ts";
import type { BuiltRequest } from "./request.ts";
import { parseRetryAfter } from "./retry.ts";

export interface AttemptOptions extends InterpretContext {
  readonly op: OperationDef;
  readonly request: BuiltRequest;
  /** Request headers including the credentials: never logged, never put into an error. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** The body cap and the memory an answer may hold (api/page.ts). */
  readonly limits: PageLimits;
  readonly signal?: AbortSignal | undefined;
  /** Called with the HTTP `Date` header of every answer (the server's clock, 1 s resolution). */
  readonly onDate?: ((date: string | undefined) => void) | undefined;
  /** Our clock: a date-form Retry-After without the server's Date is measured from it. */
  readonly now: () => number;
}

export interface AttemptResult {
  readonly status: number;
  /** The answer; its records are the caller's to read and dispose of. */
  readonly body: Page;
  readonly bytes: number;
}

// An error page is only read for its snippet; no need to hold megabytes of HTML.
const ERROR_BODY_MAX = 64 * 1024;

// undici codes that mean our request was malformed: a bug, retrying cannot help.
const PROGRAMMING_CODES = new Set(["UND_ERR_INVALID_ARG", "UND_ERR_NOT_SUPPORTED", "UND_ERR_INVALID_RETURN_VALUE"]);

// Certificate verification failures (OpenSSL's names, as Node reports them): the same certificate
// comes back on every attempt, so they are not transport hiccups. A private CA is the usual cause.
const TLS_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
]);

/** Sends the request once. The body is always consumed or destroyed, so no socket leaks. */
export async function sendOnce(pool: Dispatcher, o: AttemptOptions): Promise<AttemptResult> {
  if (o.signal?.aborted) throw o.signal.reason;
  // One deadline for headers and body together (undici's own timeouts are per read: a body that
  // trickles a byte at a time would never end).
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), o.timeoutMs);
  const onCallerAbort = () => deadline.abort();
  o.signal?.addEventListener("abort", onCallerAbort, { once: true });
  let answered = false;
  try {
    const res = await pool.request({
      // A pool ignores it; the proxy agent picks its route by it.
      origin: o.request.origin,
      method: o.request.method,
      path: o.request.path,
      headers: o.headers,
      body: o.request.body ?? null,
      signal: deadline.signal,
      headersTimeout: o.timeoutMs,
      bodyTimeout: o.timeoutMs,
    });
    answered = true;
    return await readAnswer(res, o);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (o.signal?.aborted) throw o.signal.reason;
    throw transportError(e, deadline.signal.aborted, answered, o);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onCallerAbort);
  }
}

/** Reads an answer: a 2xx body within the size limit, interpreted; any other status a typed error. */
async function readAnswer(res: Dispatcher.ResponseData, o: AttemptOptions): Promise<AttemptResult> {
  const date = first(res.headers.date);
  o.onDate?.(date);
  const ok = res.statusCode >= 200 && res.statusCode < 300;
  // No Accept-Encoding is sent, so a compressed body is a server or proxy fault; it is never
  // inflated (a few KiB can expand to gigabytes), nor read as text (its bytes are binary).
  const encoding = first(res.headers["content-encoding"])?.trim().toLowerCase();
  if (ok && encoding && encoding !== "identity") {
    discard(res.body);
    throw new EncodedBodyError(encoding, o.ctx, { secrets: o.secrets });
  }
  if (ok && Number(res.headers["content-length"]) > o.limits.maxBytes) {
    discard(res.body);
    throw new ResponseTooLargeError(o.limits.maxBytes, o.ctx, { secrets: o.secrets });
  }
  if (ok) {
    const page = await readPage(res.body, o.op, o.limits, o);
    return { status: res.statusCode, body: page, bytes: page.bytes };
  }
  const text = (await readLimited(res.body, ERROR_BODY_MAX))?.toString("utf8") ?? "";
  // A date-form Retry-After is on the server's clock: measured from its Date header when it sent one.
  const serverNow = date && Number.isFinite(Date.parse(date)) ? Date.parse(date) : o.now();
  const location = first(res.headers.location);
  throw statusError(res.statusCode, text, parseRetryAfter(res.headers["retry-after"], serverNow), location, o);
}

/** Non-2xx: 401/403 and token-error bodies are AuthError, 429 RateLimitedError, others HttpStatusError. */
function statusError(
  status: number,
  text: string,
  retryAfterMs: number | undefined,
  location: string | undefined,
  o: AttemptOptions,
): ApiError {
  const opts = { secrets: o.secrets, retryAfterMs };
  // Never followed: the token would go with it to wherever the server points.
  if (status >= 300 && status < 400)
    return new HttpStatusError(status, text, o.ctx, {
      ...opts,
      message: `HTTP ${status}: the server redirects to ${location ?? "(no Location header)"}; not followed (the token must not go elsewhere). If that is the API's address, set APM_BASE_URL to it`,
    });
  if (status === 401 || status === 403)
    return new AuthError(`HTTP ${status}`, o.ctx, { secrets: o.secrets, status, tokenHeader: o.tokenHeader });
  if (status === 429) return new RateLimitedError(status, text, o.ctx, opts);
  // `{"msg":"[F] Invalid token","code":400}` may come with a 4xx status too.
  if (status >= 400 && status < 500 && text.trim().startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = parseJson(text.trim());
    } catch {
      parsed = undefined;
    }
    try {
      rejectErrorObject(parsed, text.trim(), o);
    } catch (e) {
      if (e instanceof AuthError) return e;
    }
  }
  return new HttpStatusError(status, text, o.ctx, opts);
}

function transportError(e: unknown, deadlineHit: boolean, answered: boolean, o: AttemptOptions): ApiError {
  const code = (e as { code?: unknown }).code;
  const codeText = typeof code === "string" ? code : undefined;
  const opts = { secrets: o.secrets, cause: e, answered };
  if (codeText && PROGRAMMING_CODES.has(codeText)) return new ApiError(`request rejected by the HTTP client (${codeText})`, o.ctx, opts);
  if (codeText && TLS_CODES.has(codeText)) return new TlsError(codeText, o.ctx, opts);
  if (deadlineHit || codeText === "UND_ERR_HEADERS_TIMEOUT" || codeText === "UND_ERR_BODY_TIMEOUT")
    return new TransportError(`no complete answer within ${o.timeoutMs} ms (api.timeoutMs)`, o.ctx, {
      ...opts,
      code: codeText ?? "TIMEOUT",
    });
  const what = e instanceof Error ? e.message : String(e);
  return new TransportError(`connection failed: ${codeText ?? "error"} ${what}`, o.ctx, { ...opts, code: codeText });
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
