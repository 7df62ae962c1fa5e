// Every advisory lock apm-sync takes, its key spelled once. Postgres hashes the names; a two-int
// key (a namespace and a name) never clashes with the one-bigint write key.

/** SQL of each lock's key, with the parameters it reads. */
export const LOCK_KEYS = {
  /** A stream target's session lock, and a run's (`sync_runs`, its id): $1 the name (schema-qualified), $2 the key. */
  session: "hashtext(current_schema() || '/' || $1::text), hashtext($2::text)",
  /** The writes under a session lock (one bigint): $1 and $2 as the session lock's. */
  write: "hashtextextended(current_schema() || '/' || $1::text || '/' || $2::text, 0)",
  /** Making or dropping a table's partitions (schema-qualified): $1 the table. */
  partitions: "hashtext('apm-sync:partitions'), hashtext(current_schema() || '.' || $1::text)",
  /** Migrating a schema: $1 the schema. */
  migrate: "hashtext('apm-sync:migrate'), hashtext($1::text)",
} as const;

/**
 * SQL predicate: the session lock of `name` and `key` (SQL text expressions) is held, by backend
 * `pid` when given. pg_locks lists the whole cluster and shows two-int keys as oids (objsubid 2);
 * advisory locks belong to one database, so only this database's count.
 */
export function sessionLockHeld(name: string, key: string, pid?: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2${pid ? ` AND l.pid = ${pid}` : ""}
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = hashtext(current_schema() || '/' || ${name})::oid AND l.objid = hashtext(${key})::oid)`;
}
