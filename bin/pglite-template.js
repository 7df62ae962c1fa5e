#!/usr/bin/env node
// Builds the embedded database's template once, at install time (postinstall): an initialized
// PGlite data directory under node_modules/.cache/apm-sync/. PGlite's initdb runs a second
// PGlite instance next to the first and peaks near 800 MiB; a new embedded database is a copy of
// this directory on disk (src/db/driver/embedded.ts), opened like any existing one. Never fails the
// install: without a template the first embedded run initializes its database itself.
// The template is private like a database (directories 0700, files 0600): PGlite's initdb makes
// its files 0666 whatever the umask. A template built before that is narrowed on the next install.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The template of the installed PGlite version (the same rule as src/db/driver/embedded-files.ts). */
export function templateDir() {
  const pkg = join(root, "node_modules", "@electric-sql", "pglite", "package.json");
  const version = JSON.parse(readFileSync(pkg, "utf8")).version;
  return join(root, "node_modules", ".cache", "apm-sync", `pglite-${version}-pgdata`);
}

/** Takes the group and other bits off `dir` and everything under it (as tightenTree in src/db/driver/embedded-files.ts). */
function tightenTree(dir) {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => join(e.parentPath, e.name));
  for (const entry of [dir, ...entries]) {
    const stat = lstatSync(entry);
    if (!stat.isSymbolicLink() && (stat.mode & 0o077) !== 0) chmodSync(entry, stat.mode & 0o700);
  }
}

try {
  const dir = templateDir();
  if (!existsSync(join(dir, "PG_VERSION"))) {
    const { PGlite } = await import("@electric-sql/pglite");
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    const pg = await PGlite.create(tmp);
    await pg.close();
    tightenTree(tmp);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    process.stdout.write("apm-sync: embedded database template ready\n");
  } else tightenTree(dir);
} catch (e) {
  process.stderr.write(
    `apm-sync: no embedded database template (${e instanceof Error ? e.message : e}); the first embedded run initializes its database itself\n`,
  );
}
