// One line per failure, with what to do next where we know it. Messages of API errors are
// already redacted by the client; nothing here adds a secret.
import { AuthError, RateLimitedError, TlsError, TransportError } from "../api/errors.ts";
import { SchemaDriftError } from "../schemas/errors.ts";

export function describeError(e: unknown): string {
  if (e instanceof AuthError) return `${e.message} (check the token and the APM_TOKEN_HEADER/APM_PCODE_HEADER names)`;
  if (e instanceof SchemaDriftError) return `${e.message} (the response shape changed; the window will be retried next run)`;
  if (e instanceof RateLimitedError)
    return `${e.message} (rate limited${e.attempt > 1 ? ` after ${e.attempt - 1} retries` : ""}; lower APM_RPS or APM_CONCURRENCY)`;
  // Its message already says what to do (NODE_EXTRA_CA_CERTS).
  if (e instanceof TlsError) return e.message;
  if (e instanceof TransportError) return `${e.message} (network or server problem; the window will be retried next run)`;
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === "string" ? `${e.message} (${code})` : e.message;
  }
  return String(e);
}
