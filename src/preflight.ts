// What is checked before a command sends anything: the embedded database's directory can be
// created (or, for commands that only read, already holds a warehouse), and the database answers.
// Each failure is a usage error (exit 2) naming the setting and what to check.
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type postgres from "postgres";
import { LOCK_FILE } from "./db/driver/embedded-lock.ts";
import { sessionsShared } from "./db/driver/session.ts";
import { UsageError } from "./usage-error.ts";

const DATA_DIR = "APM_DATA_DIR (file key dataDir)";

/**
 * Creates the embedded database's directory one level at a time. (`mkdirSync(.., {recursive})`
 * never returns under /proc, where every mkdir answers ENOENT.)
 */
export function prepareDataDir(dir: string): void {
  const path = resolve(dir);
  const missing: string[] = [];
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) {
    missing.unshift(existing);
    existing = dirname(existing);
  }
  try {
    if (!statSync(existing).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    for (const level of missing) mkdirSync(level);
    accessSync(path, constants.W_OK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    const why = code === "EACCES" || code === "EPERM" || code === "EROFS" ? "not writable" : "cannot be created";
    throw new UsageError(
      `${DATA_DIR}: ${path} ${why} (${code}); point APM_DATA_DIR at a directory this user may write, or set DATABASE_URL`,
    );
  }
  checkDataDir(path);
}

/** `status` and `report` read a warehouse; a mistyped directory must not become a new empty one. */
export function requireDataDir(dir: string): void {
  const pgdata = join(resolve(dir), "pgdata");
  if (!existsSync(join(pgdata, "PG_VERSION")))
    throw new UsageError(`${DATA_DIR}: no warehouse at ${pgdata} (check APM_DATA_DIR, or run \`apm-sync sync\` first)`);
  checkDataDir(resolve(dir));
}

/**
 * What opening the embedded database needs of its directory, checked before it is opened: the
 * lock path free or a file (a directory there was a raw EISDIR), and every file of it writable,
 * reading too (PGlite writes its files as it starts: a read-only one failed as "[object Object]").
 */
function checkDataDir(dir: string): void {
  const lock = join(dir, LOCK_FILE);
  const kind = kindOf(lock);
  if (kind !== null && kind !== "file")
    throw new UsageError(`${DATA_DIR}: ${lock} is a ${kind}, not apm-sync's lock file (a file it makes and removes): remove it`);
  const denied = firstDenied(dir);
  if (denied)
    throw new UsageError(
      `${DATA_DIR}: this user may not read and write ${denied.path} (${denied.code}), and the embedded database writes to its files even to read: ` +
        "give this user write access to all of APM_DATA_DIR, or point APM_DATA_DIR at a copy it may write",
    );
}

/** What is at `path` (a symbolic link is not followed); null: nothing. */
function kindOf(path: string): string | null {
  try {
    const stat = lstatSync(path);
    return stat.isFile() ? "file" : stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "symbolic link" : "special file";
  } catch {
    return null;
  }
}

/** The first path under `path` (itself included) this process may not read and write; symbolic links are not followed. */
function firstDenied(path: string): { path: string; code: string } | null {
  const { R_OK, W_OK, X_OK } = constants;
  const denied = failure(path, () => accessSync(path, R_OK | W_OK | X_OK));
  if (denied) return denied;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    const found = entry.isDirectory() ? firstDenied(child) : entry.isFile() ? failure(child, () => accessSync(child, R_OK | W_OK)) : null;
    if (found) return found;
  }
  return null;
}

/** `path` and the code `check` failed with, or null when it passed. */
function failure(path: string, check: () => void): { path: string; code: string } | null {
  try {
    check();
    return null;
  } catch (e) {
    return { path, code: (e as NodeJS.ErrnoException).code ?? "error" };
  }
}

/** SQLSTATEs and driver codes of a database that cannot be used as configured. */
const SQLSTATE = {
  INVALID_CATALOG_NAME: "3D000",
  INVALID_AUTHORIZATION: "28000",
  INVALID_PASSWORD: "28P01",
  INSUFFICIENT_PRIVILEGE: "42501",
  /** protocol_violation: refused at the connection's start, a pooler's "unsupported startup parameter" among them. */
  PROTOCOL_VIOLATION: "08P01",
} as const;

/** What a pooler between apm-sync and Postgres must do: keep a server session for each connection. */
const SESSION_POOL = "at the server, or at a connection pooler in session mode (PgBouncer: pool_mode = session)";

/**
 * A usage error for a database that does not exist, a refused role or password, a server that
 * does not answer or a schema the role may not create; null for anything else. Never echoes
 * DATABASE_URL (it may hold a password): the server's own message names the database or role.
 * `setting` names where the URL came from (`--to` of transfer).
 */
export function databaseProblem(e: unknown, schema: string, setting = "DATABASE_URL"): UsageError | null {
  const err = e as { code?: unknown; message?: string; address?: string; port?: number; hostname?: string };
  const at = err.address ? ` at ${err.address}${err.port ? `:${err.port}` : ""}` : err.hostname ? ` (${err.hostname})` : "";
  const say = (what: string, check: string) => new UsageError(`${setting}: ${what}; check ${check}`);
  switch (err.code) {
    case SQLSTATE.INVALID_CATALOG_NAME:
      return say(`${err.message}`, `the database name in ${setting} (or create the database)`);
    case SQLSTATE.INVALID_AUTHORIZATION:
    case SQLSTATE.INVALID_PASSWORD:
      return say(`${err.message}`, `the user name and password in ${setting}`);
    case SQLSTATE.INSUFFICIENT_PRIVILEGE:
      return say(
        `${err.message}`,
        `that the role may create schema ${schema} (GRANT CREATE ON DATABASE), or that the schema exists and is the role's (CREATE SCHEMA ... AUTHORIZATION), or set APM_DB_SCHEMA`,
      );
    case SQLSTATE.PROTOCOL_VIOLATION:
      return say(
        `${err.message}`,
        `that ${setting} points ${SESSION_POOL}, and that it adds no parameter a pooler refuses (set those on the role instead: ALTER ROLE ... SET)`,
      );
    case "ECONNREFUSED":
      return say(`connection refused${at}`, `the host and port in ${setting}, and that Postgres is running there`);
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return say(`host not found${at}`, `the host name in ${setting}`);
    case "CONNECT_TIMEOUT":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
      return say(`no answer${at}`, `the host and port in ${setting}, and any firewall between`);
    default:
      return null;
  }
}

/**
 * A usage error when the server's connections share their sessions (sessionsShared: a pooler in
 * transaction or statement mode): apm-sync's stream locks and settings live in sessions, and a
 * lock taken on a shared one is held by whichever client has it next.
 */
export async function requireOwnSessions(sql: postgres.Sql, setting = "DATABASE_URL"): Promise<void> {
  const seen = await sessionsShared(sql);
  if (seen)
    throw new UsageError(
      `${setting}: its connections share server sessions (${seen}): a connection pooler in transaction or statement mode, where apm-sync cannot hold its locks; check that ${setting} points ${SESSION_POOL}`,
    );
}
