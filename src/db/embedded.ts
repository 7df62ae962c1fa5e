// Embedded database: PGlite in this process; postgres.js talks to it through an in-process
// connection (embedded-socket.ts), exactly as to a real server. One process at a time opens a
// data directory (embedded-lock.ts).
import { type Dirent, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { copyFile, readdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { Duplex } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import pLimit from "p-limit";
import { packageRoot } from "../util/package-root.ts";
import { type DataDirLock, DEFAULT_WAIT_MS, lockDataDir } from "./embedded-lock.ts";
import { pgliteConnection } from "./embedded-socket.ts";
import { quoteIdent } from "./sqlText.ts";

/**
 * Settings of the embedded server. PGlite keeps Postgres's 128 MB of shared buffers in the
 * process's own memory; the tool's working set is a few windows at a time, so 16 MB serves it
 * and keeps a run in a 512 MiB container.
 */
const POSTGRESQL_CONF = ["shared_buffers = 16MB"];

/**
 * The template built at install time by bin/pglite-template.js (the same path rule): a new data
 * directory is a copy of it on disk, opened like an existing one, instead of running PGlite's
 * initdb in this process (which peaks near 800 MiB) or unpacking a tarball in memory (+120 MiB).
 * null when it is missing (install scripts skipped): then initdb runs here.
 */
function templateDir(): string | null {
  try {
    const root = packageRoot();
    const pkg = JSON.parse(readFileSync(join(root, "node_modules", "@electric-sql", "pglite", "package.json"), "utf8")) as {
      version: string;
    };
    const dir = join(root, "node_modules", ".cache", "apm-sync", `pglite-${pkg.version}-pgdata`);
    return existsSync(join(dir, "PG_VERSION")) ? dir : null;
  } catch {
    return null;
  }
}

/** Copies a directory tree several files at a time: a data directory is about a thousand small files. */
async function copyTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true });
  const rel = (e: Dirent) => relative(from, join(e.parentPath, e.name));
  mkdirSync(to, { recursive: true });
  for (const dir of entries
    .filter((e) => e.isDirectory())
    .map(rel)
    .sort())
    mkdirSync(join(to, dir), { recursive: true });
  const limit = pLimit(8);
  await Promise.all(entries.filter((e) => e.isFile()).map((e) => limit(() => copyFile(join(from, rel(e)), join(to, rel(e))))));
}

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
  mkdirSync(dir, { recursive: true });
  const lock = await lockDataDir(dir, {
    waitMs,
    onWait: (holder) =>
      opts.onWait?.(
        `the embedded database in ${dir} is in use by ${holder}; waiting up to ${Math.round(waitMs / 1000)} s (APM_DATA_DIR_WAIT)`,
      ),
  });
  try {
    await createFromTemplate(dataPath);
    mkdirSync(dataPath, { recursive: true });
    const pg = await PGlite.create(dataPath, { postgresqlconf: POSTGRESQL_CONF });
    return await prepared(pg, dataPath, schema, lock);
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

async function prepared(pg: PGlite, dataPath: string, schema: string, lock: DataDirLock): Promise<EmbeddedServer> {
  try {
    await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)};`);
    return {
      dataPath,
      connect: () => pgliteConnection(pg),
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
