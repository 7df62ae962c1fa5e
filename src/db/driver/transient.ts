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

/** SQLSTATE disk_full: a server's disk took no more. Not in SQLSTATE above, whose codes are all retried. */
export const DISK_FULL = "53100";

/** A server's disk_full, or the embedded database's floor (embedded-disk.ts): no later write can succeed. */
export function isDiskFull(e: unknown): boolean {
  const code = dbErrorCode(e);
  return code === DISK_FULL || code === DISK_FLOOR_CODE;
}

export function isTransientDbError(e: unknown): boolean {
  const code = dbErrorCode(e);
  if (typeof code !== "string") return false;
  if (RETRYABLE_SQLSTATES.has(code)) return true;
  if (/^[0-9A-Z]{5}$/.test(code) && code.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  return CONNECTION_CODES.has(code);
}
