// The embedded database's files on disk: the install-time template it starts from, and their
// modes. They hold the warehouse, so they are private (directories 0700, files 0600) whatever the
// umask: the template's files came out of PGlite's initdb 0666 and a copy keeps a file's mode, and
// PGlite's file layer creates a file with the mode Postgres asks for minus the umask of its own
// C library (022), not the process's (Postgres's relcache and statistics files came out 0644).
import { chmodSync, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { copyFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { NodeFS } from "@electric-sql/pglite/nodefs";
import pLimit from "p-limit";
import { packageRoot } from "../../util/package-root.ts";

/** Group and other permission bits: none on anything of the database. */
const NOT_OWNER = 0o077;

/**
 * The template built at install time by bin/pglite-template.js (the same path rule): a new data
 * directory is a copy of it on disk, opened like an existing one, instead of running PGlite's
 * initdb in this process (which peaks near 800 MiB) or unpacking a tarball in memory (+120 MiB).
 * null when it is missing (install scripts skipped): then initdb runs here.
 */
export function templateDir(): string | null {
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

/** Copies a directory tree several files at a time (a data directory is about a thousand small files), privately. */
export async function copyTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true });
  const rel = (e: Dirent) => relative(from, join(e.parentPath, e.name));
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const dir of entries
    .filter((e) => e.isDirectory())
    .map(rel)
    .sort())
    mkdirSync(join(to, dir), { recursive: true, mode: 0o700 });
  const limit = pLimit(8);
  await Promise.all(entries.filter((e) => e.isFile()).map((e) => limit(() => copyFile(join(from, rel(e)), join(to, rel(e))))));
  // copyFile gives the copy the template's mode.
  tightenTree(to);
}

/** Takes the group and other bits off `path` (a symbolic link is left alone); whether it changed. */
export function tighten(path: string): boolean {
  const { mode } = lstatSync(path);
  if ((mode & 0o170000) === 0o120000 || (mode & NOT_OWNER) === 0) return false;
  chmodSync(path, mode & 0o700);
  return true;
}

/** tighten() on `path` and everything under it; returns how many changed. (A walk of its own: readdir's `recursive` took 5 times as long.) */
export function tightenTree(path: string): number {
  let changed = tighten(path) ? 1 : 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    changed += entry.isDirectory() ? tightenTree(child) : tighten(child) ? 1 : 0;
  }
  return changed;
}

type Module = Parameters<NodeFS["init"]>[1];
type PreRun = NonNullable<Module["preRun"]>[number];
type Attr = { mode?: number };
interface Ops {
  mknod: (parent: unknown, name: string, mode: number, dev: number) => unknown;
  setattr: (node: unknown, attr: Attr) => void;
}
interface NodeFs {
  node_ops: Ops;
  stream_ops: { setattr: (stream: unknown, attr: Attr) => void };
}

const narrowed = (attr: Attr): Attr => (attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~NOT_OWNER });

/**
 * PGlite's Node file system, creating every file and directory without group and other bits.
 * Emscripten's node file system creates a file (`mknod`) and then sets the mode Postgres asked
 * for (`setattr`, a chmod); both are narrowed, for WAL segments, relations and the relcache and
 * statistics files alike.
 */
export class PrivateNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS["init"]>): ReturnType<NodeFS["init"]> {
    const { emscriptenOpts } = await super.init(...args);
    const privately: PreRun = (mod) => {
      const fs = (mod.FS as unknown as { filesystems: { NODEFS: NodeFs } }).filesystems.NODEFS;
      const { mknod, setattr } = fs.node_ops;
      const streamSetattr = fs.stream_ops.setattr;
      fs.node_ops.mknod = (parent, name, mode, dev) => mknod.call(fs.node_ops, parent, name, mode & ~NOT_OWNER, dev);
      fs.node_ops.setattr = (node, attr) => setattr.call(fs.node_ops, node, narrowed(attr));
      fs.stream_ops.setattr = (stream, attr) => streamSetattr.call(fs.stream_ops, stream, narrowed(attr));
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), privately] } };
  }
}
