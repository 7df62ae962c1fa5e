// Which database errors heal by themselves: a restart or failover, a lost connection, a
// serialization conflict or deadlock. Decided on SQLSTATE and driver codes, never message text.
import { DrizzleQueryError } from "drizzle-orm/errors";
import { DISK_FLOOR_CODE } from "./embedded-disk.ts";

/** SQLSTATEs of a server going away or a transaction that may simply be run again. */
export const SQLSTATE = {
  ADMIN_SHUTDOWN: "57P01",
  CRASH_SHUTDOWN: "57P02",
  CANNOT_CONNECT_NOW: "57P03",
  SERIALIZATION_FAILURE: "40001",
  DEADLOCK_DETECTED: "40P01",
} as const;

/** Class 08: connection exceptions. */
const CONNECTION_EXCEPTION_CLASS = "08";

const RETRYABLE_SQLSTATES = new Set<string>(Object.values(SQLSTATE));

/** postgres.js and Node codes of a connection that failed or went away. */
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  // apm-sync's own: a stream lock whose connection died between its check and the write.
  "LOCK_MOVED",
]);

/** The SQLSTATE or driver code of `e`; drizzle's statements (the migrator's) fail with the driver's error as the cause. */
export function dbErrorCode(e: unknown): unknown {
  if (e instanceof DrizzleQueryError) return dbErrorCode(e.cause);
  return (e as { code?: unknown } | null)?.code;
}

/**
 * SQLSTATEs of a server's own limits, not in SQLSTATE above (whose codes are all retried): a run
 * again meets them again. describe-error.ts says what to do about each.
 */
export const LIMIT_SQLSTATE = {
  /** disk_full: a server's disk took no more. */
  DISK_FULL: "53100",
  /** query_canceled: statement_timeout, or a cancel on request (the refresh's at the shutdown's end). */
  QUERY_CANCELED: "57014",
  /** lock_not_available: lock_timeout, or a NOWAIT lock refused. */
  LOCK_NOT_AVAILABLE: "55P03",
  /** read_only_sql_transaction: a standby, or a session read-only by default. */
  READ_ONLY_TRANSACTION: "25006",
  /** insufficient_privilege. */
  INSUFFICIENT_PRIVILEGE: "42501",
  /** too_many_connections: the server's, a database's or a role's limit. */
  TOO_MANY_CONNECTIONS: "53300",
} as const;

/** A server's disk_full, or the embedded database's floor (embedded-disk.ts): no later write can succeed. */
export function isDiskFull(e: unknown): boolean {
  const code = dbErrorCode(e);
  return code === LIMIT_SQLSTATE.DISK_FULL || code === DISK_FLOOR_CODE;
}

export function isTransientDbError(e: unknown): boolean {
  const code = dbErrorCode(e);
  if (typeof code !== "string") return false;
  if (RETRYABLE_SQLSTATES.has(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code) && code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  return CONNECTION_CODES.has(code);
}
