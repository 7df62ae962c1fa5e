#!/usr/bin/env node
// Builds the embedded database's template once, at install time (postinstall): an initialized
// PGlite data directory, gzipped, under node_modules/.cache/apm-sync/. PGlite's initdb runs a
// second PGlite instance next to the first and peaks near 800 MiB; a new embedded database
// loaded from this template peaks under 400 MiB (src/db/embedded.ts). Never fails the install:
// without a template the first embedded run initializes its database itself.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The template of the installed PGlite version (the same rule as src/db/embedded.ts). */
export function templateFile() {
  const pkg = join(root, "node_modules", "@electric-sql", "pglite", "package.json");
  const version = JSON.parse(readFileSync(pkg, "utf8")).version;
  return join(root, "node_modules", ".cache", "apm-sync", `pglite-${version}-pgdata.tgz`);
}

try {
  const file = templateFile();
  if (!existsSync(file)) {
    const { PGlite } = await import("@electric-sql/pglite");
    const pg = await PGlite.create("memory://");
    const tarball = Buffer.from(await (await pg.dumpDataDir("gzip")).arrayBuffer());
    await pg.close();
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, tarball);
    renameSync(`${file}.tmp`, file);
    process.stdout.write(`apm-sync: embedded database template ready (${Math.round(tarball.length / 1024)} KiB)\n`);
  }
} catch (e) {
  process.stderr.write(
    `apm-sync: no embedded database template (${e instanceof Error ? e.message : e}); the first embedded run initializes its database itself\n`,
  );
}
