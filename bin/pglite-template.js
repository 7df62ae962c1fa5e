#!/usr/bin/env node
// Builds the embedded database's template once, at install time (postinstall): an initialized
// PGlite data directory under node_modules/.cache/apm-sync/. PGlite's initdb runs a second
// PGlite instance next to the first and peaks near 800 MiB; a new embedded database is a copy of
// this directory on disk (src/db/embedded.ts), opened like any existing one. Never fails the
// install: without a template the first embedded run initializes its database itself.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The template of the installed PGlite version (the same rule as src/db/embedded.ts). */
export function templateDir() {
  const pkg = join(root, "node_modules", "@electric-sql", "pglite", "package.json");
  const version = JSON.parse(readFileSync(pkg, "utf8")).version;
  return join(root, "node_modules", ".cache", "apm-sync", `pglite-${version}-pgdata`);
}

try {
  const dir = templateDir();
  if (!existsSync(join(dir, "PG_VERSION"))) {
    const { PGlite } = await import("@electric-sql/pglite");
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const pg = await PGlite.create(tmp);
    await pg.close();
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    process.stdout.write("apm-sync: embedded database template ready\n");
  }
} catch (e) {
  process.stderr.write(
    `apm-sync: no embedded database template (${e instanceof Error ? e.message : e}); the first embedded run initializes its database itself\n`,
  );
}
