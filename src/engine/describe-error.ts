// One line per failure, with what to do next where we know it. Messages of API errors are
// already redacted by the client; nothing here adds a secret.
import { DrizzleQueryError } from "drizzle-orm/errors";
import { AuthError, RateLimitedError, TlsError, TransportError } from "../api/errors.ts";
import { DB_CONNECTIONS_DEFAULT, DB_CONNECTIONS_MIN } from "../db/driver/connection-budget.ts";
import { dbErrorCode, LIMIT_SQLSTATE as L } from "../db/driver/transient.ts";
import { DbRetriesSpentError } from "../db/driver/withDbRetry.ts";
import { SchemaDriftError } from "../schemas/errors.ts";

/**
 * The advice appended to an error's message, in parentheses. The ledger stores the whole line;
 * `status` splits the advice off again (splitAdvice) to say it once per group of failures.
 */
export const ADVICE = {
  schemaDrift: "the response shape changed; the window will be retried next run",
  rateLimited: "rate limited; lower APM_RPS or APM_CONCURRENCY",
  unreachable: "could not connect: check the host and port of APM_BASE_URL, that the server is up, and HTTPS_PROXY/NO_PROXY",
  transport: "network or server problem; the window will be retried next run",
  diskFull:
    "the database's disk is full: free space on it (or drop old months: APM_RETENTION and prune), then run the command again; what was committed is kept",
  databaseAway:
    "check that the database is up and reachable at DATABASE_URL, or raise APM_DB_RETRY; then run the command again: what was committed is kept",
  statementTimeout:
    "the server's statement_timeout cancelled it: let apm-sync's statements run longer (add ?statement_timeout=0 to DATABASE_URL, or ALTER ROLE ... SET statement_timeout for its role), then run the command again; what was committed is kept",
  lockTimeout:
    "the server's lock_timeout cancelled it: let apm-sync wait for its locks (add ?lock_timeout=0 to DATABASE_URL, or ALTER ROLE ... SET lock_timeout for its role), then run the command again; what was committed is kept",
  readOnly:
    "the database takes no writes: point DATABASE_URL at the primary, not a standby (a read replica), or, where the database or role is read-only by default for its other clients, add ?default_transaction_read_only=off to DATABASE_URL; then run the command again",
  privilege:
    "the role in DATABASE_URL lacks a privilege apm-sync needs: it owns its schema (APM_DB_SCHEMA) and the tables in it, and makes the schema when it is missing: give it CREATE on the database (GRANT CREATE ON DATABASE ... TO ...) once, or make its schemas for it beforehand (CREATE SCHEMA ... AUTHORIZATION ...: APM_DB_SCHEMA, and APM_DB_SCHEMA with _queue for the job queue), and run every command as that role; then run the command again",
  connections: `the server has no connection left for apm-sync, which opens up to APM_DB_CONNECTIONS into Postgres (${DB_CONNECTIONS_DEFAULT} unless set): set APM_DB_CONNECTIONS to what the server can spare (at least ${DB_CONNECTIONS_MIN}; fewer streams are then written at once), raise the server's max_connections (or the database's or role's CONNECTION LIMIT), or stop other clients; then run the command again; what was committed is kept`,
} as const;

/**
 * A server's own limits, which apm-sync's statements can meet on a database set up for other
 * clients: each by its SQLSTATE and the server's words where the SQLSTATE alone says less (a
 * cancel on request, a NOWAIT lock refused). Under a server's lc_messages in another language those
 * two get no advice; the line still says what the server said.
 */
const SERVER_LIMITS: readonly { code: string; says: string; advice: string }[] = [
  { code: L.DISK_FULL, says: "", advice: ADVICE.diskFull },
  { code: L.QUERY_CANCELED, says: "statement timeout", advice: ADVICE.statementTimeout },
  { code: L.LOCK_NOT_AVAILABLE, says: "lock timeout", advice: ADVICE.lockTimeout },
  { code: L.READ_ONLY_TRANSACTION, says: "", advice: ADVICE.readOnly },
  { code: L.INSUFFICIENT_PRIVILEGE, says: "permission denied", advice: ADVICE.privilege },
  { code: L.TOO_MANY_CONNECTIONS, says: "", advice: ADVICE.connections },
];

// What describeError appended to AuthError's message before that message said what to check
// itself: ledger rows written then carry the advice twice.
const OLD_AUTH_ADVICE = " (check the token and the APM_TOKEN_HEADER/APM_PCODE_HEADER names)";

// Advice inside an error's own message (AuthError, TlsError): its last sentence or clause.
const INNER_ADVICE = [/^(authentication failed .*?)\. (Check .*)$/, /^(TLS: \S+); (for a private CA .*)$/];

// Failures to open a connection at all: the next window meets the same, so "retried next run"
// is no advice; the address or the network path is what to check.
const CONNECT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether `e` says the server could not be connected to (refused, unknown host, no route). */
export function isUnreachable(e: unknown): boolean {
  return e instanceof TransportError && CONNECT_CODES.has(e.code ?? "");
}

export function describeError(e: unknown): string {
  const line = describeBare(e);
  // A server's limit met, alone or inside a failed drizzle statement: the advice comes last (splitAdvice).
  const code = dbErrorCode(e);
  const driver = e instanceof DrizzleQueryError ? e.cause : e;
  const message = driver instanceof Error ? driver.message : "";
  const limit = SERVER_LIMITS.find((l) => l.code === code && message.includes(l.says));
  return limit ? `${line} (${limit.advice})` : line;
}

function describeBare(e: unknown): string {
  // AuthError's message already says which token and header to check.
  if (e instanceof AuthError) return e.message;
  if (e instanceof SchemaDriftError) return `${e.message} (${ADVICE.schemaDrift})`;
  if (e instanceof RateLimitedError) return `${e.message} (${ADVICE.rateLimited})`;
  // Its message already says what to do (NODE_EXTRA_CA_CERTS).
  if (e instanceof TlsError) return e.message;
  if (isUnreachable(e)) return `${(e as TransportError).message} (${ADVICE.unreachable})`;
  if (e instanceof TransportError) return `${e.message} (${ADVICE.transport})`;
  if (e instanceof DbRetriesSpentError) return `${describeBare(e.cause)}, ${e.message} (${ADVICE.databaseAway})`;
  // drizzle's (the migrator's): the driver's error, and which statement (its parameters are left out).
  if (e instanceof DrizzleQueryError && e.cause !== undefined)
    return `${describeBare(e.cause)} in \`${e.query.replace(/\s+/g, " ").slice(0, 100)}\``;
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === "string" ? `${e.message} (${code})` : e.message;
  }
  // A thrown object that is no Error (PGlite's file layer throws { name: "ErrnoError", errno }):
  // its own words, never "[object Object]".
  if (e !== null && typeof e === "object") {
    const { message, name, code, errno } = e as Record<string, unknown>;
    const what = typeof message === "string" ? message : typeof name === "string" ? name : "an error of no kind";
    return code !== undefined ? `${what} (${String(code)})` : errno !== undefined ? `${what} (errno ${String(errno)})` : what;
  }
  return String(e);
}

/**
 * An error line as describeError wrote it (without the request's location: report/status-model.ts groupFailures),
 * split into the error and what to do about it.
 */
export function splitAdvice(line: string): { error: string; advice: string | null } {
  let error = line.trimEnd();
  if (error.endsWith(OLD_AUTH_ADVICE)) error = error.slice(0, -OLD_AUTH_ADVICE.length);
  for (const advice of Object.values(ADVICE))
    if (error.endsWith(` (${advice})`)) return { error: error.slice(0, -advice.length - 3), advice };
  for (const pattern of INNER_ADVICE) {
    const m = pattern.exec(error);
    // Said on a line of its own: "what to do: check ...".
    if (m) return { error: m[1]!, advice: m[2]!.charAt(0).toLowerCase() + m[2]!.slice(1) };
  }
  return { error, advice: null };
}
