// Applies the generated migrations in the configured schema and proves every one was applied.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { applyComments } from "../db/applyComments.ts";
import type { Database } from "../db/driver/connect.ts";
import { LOCK_KEYS } from "../db/driver/lockKeys.ts";
import { lockSessionFor } from "../db/driver/lockSession.ts";
import { quoteIdent } from "../db/sqlText.ts";
import { createViews } from "../db/views.ts";
import { dictionaryComments } from "../dictionary/comments.ts";
import { packageRoot } from "../util/package-root.ts";

export const MIGRATIONS_TABLE = "__drizzle_migrations";

/** The package's `migrations/` folder, found from this file rather than the working directory. */
export function migrationsFolder(): string {
  return join(packageRoot(), "migrations");
}

interface JournalEntry {
  readonly tag: string;
  readonly when: number;
}

function readJournal(folder: string): JournalEntry[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: JournalEntry[] };
  return journal.entries;
}

export interface MigrateResult {
  /** Migrations applied by this call (0 on a second run). */
  readonly applied: number;
  /** Migrations recorded in the database after the call (= journal entries). */
  readonly total: number;
}

/** Raised when the database does not record exactly the migrations of the journal. */
export class MigrationMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationMismatchError";
  }
}

/**
 * The schema when missing, then the migrations drizzle-kit generated, applied as drizzle's
 * migrator applies them with its bookkeeping table in the same schema, under an advisory lock so
 * two `migrate` at once do not race. Only migrations newer than the last applied one are applied
 * (one older that is missing would go silently), so the applied set is compared with the journal
 * afterwards. Then every view is created again from its definition in code (views.ts), and the
 * data dictionary's comments written where they differ from the database's (a warehouse of an
 * earlier release gets them here too).
 */
export async function migrateDatabase(database: Database, folder = migrationsFolder()): Promise<MigrateResult> {
  const { sql, schema } = database;
  const journal = readJournal(folder);
  // The lock is held by a connection of its own (a stream lock's, lockSession.ts: a pinned
  // connection of the pool hung its next statement after a lost connection) while the migrations
  // run on the pool; the embedded database has a single connection (and a single process), so it goes without.
  const lock = sql.options.max > 1 ? lockSessionFor(sql) : null;
  try {
    if (lock) await lock.sql.unsafe(`select pg_advisory_lock(${LOCK_KEYS.migrate})`, [schema]);
    await ensureSchema(sql, schema);
    const before = await appliedMigrations(sql, schema);
    await applyPending(sql, schema, folder, before.at(-1) ?? null);
    const after = await appliedMigrations(sql, schema);
    const missing = journal.filter((e) => !after.includes(e.when)).map((e) => e.tag);
    if (missing.length > 0 || after.length !== journal.length) {
      throw new MigrationMismatchError(
        `schema ${schema}: ${after.length} migration(s) recorded, journal lists ${journal.length}` +
          (missing.length > 0 ? `; not applied: ${missing.join(", ")}` : ""),
      );
    }
    // The views from their one definition (views.ts), then the dictionary's comments on everything;
    // both describe this release's tables (an older folder, as tests apply it, made its own views).
    if (folder === migrationsFolder()) {
      await sql.begin((tx) => createViews(tx));
      await applyComments(sql, schema, dictionaryComments());
    }
    return { applied: after.length - before.length, total: after.length };
  } finally {
    if (lock) {
      const unlocked = lock.sql.unsafe(`select pg_advisory_unlock(${LOCK_KEYS.migrate})`, [schema]);
      lock.release(
        await unlocked.then(
          () => true,
          () => false,
        ),
      );
    }
  }
}

/**
 * The schema, made when it is missing. A schema made beforehand for apm-sync's role (by someone
 * allowed to) is used as it is: CREATE SCHEMA IF NOT EXISTS asks for CREATE on the database
 * before it looks whether the schema exists, so it refused a role given only its own schema.
 */
async function ensureSchema(sql: Database["sql"], schema: string): Promise<void> {
  const [found] = await sql<{ n: number }[]>`select count(*)::int as n from pg_namespace where nspname = ${schema}`;
  if (found?.n === 0) await sql.unsafe(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
}

/**
 * The migrations newer than `lastApplied` (the newest recorded; null before the first), applied in
 * one transaction and recorded in the schema's bookkeeping table, as drizzle's migrator does (its
 * files, hashes and table), without the CREATE SCHEMA it sends first (see ensureSchema).
 */
async function applyPending(sql: Database["sql"], schema: string, folder: string, lastApplied: number | null): Promise<void> {
  const table = `${quoteIdent(schema)}.${quoteIdent(MIGRATIONS_TABLE)}`;
  await sql.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  const pending = readMigrationFiles({ migrationsFolder: folder }).filter((m) => lastApplied === null || lastApplied < m.folderMillis);
  if (pending.length === 0) return;
  await sql.begin(async (tx) => {
    for (const m of pending) {
      for (const statement of m.sql) await tx.unsafe(statement);
      await tx.unsafe(`insert into ${table} ("hash", "created_at") values ($1, $2)`, [m.hash, m.folderMillis]);
    }
  });
}

/** created_at (= journal `when`) of every migration recorded in the schema; [] before the first. */
export async function appliedMigrations(sql: Database["sql"], schema: string): Promise<number[]> {
  const [exists] = await sql<{ t: string | null }[]>`select to_regclass(${`${quoteIdent(schema)}.${quoteIdent(MIGRATIONS_TABLE)}`}) as t`;
  if (!exists?.t) return [];
  const rows = await sql.unsafe<{ created_at: string }[]>(
    `select created_at::text from ${quoteIdent(schema)}.${quoteIdent(MIGRATIONS_TABLE)} order by created_at`,
  );
  return rows.map((r) => Number(r.created_at));
}
