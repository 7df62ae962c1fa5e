// Embedded database: PGlite in this process; postgres.js talks to it through an in-process
// connection (embedded-socket.ts), exactly as to a real server.
import { type Dirent, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { copyFile, readdir } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { Duplex } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import pLimit from "p-limit";
import { packageRoot } from "../util/package-root.ts";
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

/**
 * Opens PGlite stored under `<dataDir>/pgdata`.
 * PGlite is ONE backend session shared by every connection, and it ignores the startup
 * `search_path` parameter, so the search path is set once on that session here.
 */
export async function startEmbedded(dataDir: string, schema: string): Promise<EmbeddedServer> {
  const dataPath = resolve(dataDir, "pgdata");
  mkdirSync(dataPath, { recursive: true });
  const template = existsSync(join(dataPath, "PG_VERSION")) ? null : templateDir();
  if (template) {
    // Copied next to it, then renamed: a copy cut short never looks like a database.
    const partial = `${dataPath}.partial`;
    rmSync(partial, { recursive: true, force: true });
    await copyTree(template, partial);
    rmSync(dataPath, { recursive: true, force: true });
    renameSync(partial, dataPath);
  }
  const pg = await PGlite.create(dataPath, { postgresqlconf: POSTGRESQL_CONF });
  try {
    await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)};`);
    return {
      dataPath,
      connect: () => pgliteConnection(pg),
      stop: async () => {
        await pg.close();
      },
    };
  } catch (e) {
    await pg.close().catch(() => {});
    throw e;
  }
}
