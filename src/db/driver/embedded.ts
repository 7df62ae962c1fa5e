// Embedded database: PGlite in this process; postgres.js talks to it through an in-process
// connection (embedded-socket.ts), exactly as to a real server. One process at a time opens a
// data directory (embedded-lock.ts); its files are private (embedded-files.ts).
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Duplex } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import { quoteIdent } from "../sqlText.ts";
import { DEFAULT_DISK_FLOOR, diskFloor } from "./embedded-disk.ts";
import { copyTree, PrivateNodeFS, templateDir, tighten, tightenTree } from "./embedded-files.ts";
import { type DataDirLock, DEFAULT_WAIT_MS, lockDataDir } from "./embedded-lock.ts";
import { pgliteConnection } from "./embedded-socket.ts";
import { WAL_SETTINGS } from "./embedded-wal.ts";

/**
 * Settings of the embedded server. PGlite keeps Postgres's 128 MB of shared buffers in the
 * process's own memory; the tool's working set is a few windows at a time, so 16 MB serves it
 * and keeps a run in a 512 MiB container. The WAL's bounds: embedded-wal.ts.
 */
const POSTGRESQL_CONF = ["shared_buffers = 16MB", ...WAL_SETTINGS];

export interface EmbeddedServer {
  readonly dataPath: string;
  /** A new connection (postgres.js's `socket` option), in this process, without a network. */
  connect(): Duplex;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** How long to wait for another process holding the directory (default DEFAULT_WAIT_MS). */
  readonly waitMs?: number;
  /** Told once when the directory is in use and the wait begins. */
  readonly onWait?: (message: string) => void;
  /** Bytes kept free on the directory's disk (default DEFAULT_DISK_FLOOR; 0: no floor): embedded-disk.ts. */
  readonly diskFloor?: number;
}

/**
 * Opens PGlite stored under `<dataDir>/pgdata`, under the directory's lock, held until `stop()`.
 * PGlite is ONE backend session shared by every connection, and it ignores the startup
 * `search_path` parameter, so the search path is set once on that session here.
 */
export async function startEmbedded(dataDir: string, schema: string, opts: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const dir = resolve(dataDir);
  const dataPath = join(dir, "pgdata");
  const waitMs = opts.waitMs ?? DEFAULT_WAIT_MS;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = await lockDataDir(dir, {
    waitMs,
    onWait: (holder) =>
      opts.onWait?.(
        `the embedded database in ${dir} is in use by ${holder}; waiting up to ${Math.round(waitMs / 1000)} s (APM_DATA_DIR_WAIT)`,
      ),
  });
  try {
    const guard = diskFloor(dir, opts.diskFloor ?? DEFAULT_DISK_FLOOR);
    guard();
    await createFromTemplate(dataPath);
    mkdirSync(dataPath, { recursive: true, mode: 0o700 });
    // Directories made by earlier versions, or under a loose umask, are narrowed on the way in.
    tightenTree(dataPath);
    tightenTop(dir);
    const pg = await PGlite.create({ fs: new PrivateNodeFS(dataPath), postgresqlconf: POSTGRESQL_CONF });
    return await prepared(pg, dataPath, schema, lock, guard);
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** A new data directory is a copy of the template, if there is one; a copy cut short never looks like a database. */
async function createFromTemplate(dataPath: string): Promise<void> {
  if (existsSync(join(dataPath, "PG_VERSION"))) return;
  const template = templateDir();
  if (!template) return;
  const partial = `${dataPath}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await copyTree(template, partial);
  rmSync(dataPath, { recursive: true, force: true });
  renameSync(partial, dataPath);
}

/** APM_DATA_DIR itself: narrowed when it may be (a volume's mount point may belong to another user). */
function tightenTop(dir: string): void {
  try {
    tighten(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") throw e;
  }
}

async function prepared(pg: PGlite, dataPath: string, schema: string, lock: DataDirLock, guard: () => void): Promise<EmbeddedServer> {
  try {
    await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)};`);
    await realignRunIds(pg);
    return {
      dataPath,
      connect: () => pgliteConnection(pg, guard),
      stop: async () => {
        try {
          await pg.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (e) {
    await pg.close().catch(() => {});
    throw e;
  }
}

/**
 * Run ids follow on from the last run. Postgres logs a sequence 32 values ahead of what it handed
 * out, and every open after a crash (a killed run) is a crash recovery that resumes from there:
 * run ids went 1, 34, 67. Set back to the table's largest id here, where this process is the
 * directory's only user (the lock): no other run can have taken an id in between. (On a Postgres
 * server concurrent runs take ids, and nothing is set back.)
 */
async function realignRunIds(pg: PGlite): Promise<void> {
  const { rows } = await pg.query<{ exists: boolean }>("SELECT to_regclass('sync_runs') IS NOT NULL AS exists");
  if (!rows[0]?.exists) return;
  await pg.query("SELECT setval(pg_get_serial_sequence('sync_runs', 'id'), coalesce(max(id), 0) + 1, false) FROM sync_runs");
}
