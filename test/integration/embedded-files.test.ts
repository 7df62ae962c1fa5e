// The embedded database's files are private whatever the umask: the real CLI under umask 022
// makes a data directory with no entry group or others may read (the template's files were
// copied 0666, and PGlite's file layer made the relcache files 0644), narrows a loose one made by
// an earlier version when it opens it, and the install step builds (or narrows) a private template.
import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../support/child-sync.ts";

let dir: string;
let umask: number;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "apm-files-"));
  // Inherited by the CLI processes.
  umask = process.umask(0o022);
});

afterAll(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

/** Every entry under `root` (itself included) as "mode path", with its permission bits. */
function modes(root: string): string[] {
  const entries = readdirSync(root, { recursive: true, withFileTypes: true }).map((e) => join(e.parentPath, e.name));
  return [root, ...entries].map((p) => `${(lstatSync(p).mode & 0o777).toString(8)} ${p}`);
}

const loose = (root: string) => modes(root).filter((m) => (Number.parseInt(m, 8) & 0o077) !== 0);

/** What an earlier version left: directories 0755, files 0666. */
function loosen(root: string): void {
  for (const m of modes(root)) {
    const path = m.slice(m.indexOf(" ") + 1);
    chmodSync(path, lstatSync(path).isDirectory() ? 0o755 : 0o666);
  }
}

// A CLI run takes seconds, and minutes on a loaded machine.
const cli = (args: string[], dataDir: string) => runCli(args, { APM_DATA_DIR: dataDir, APM_LOG_FORMAT: "plain" }, { timeoutMs: 600_000 });

describe("the embedded database's files under umask 022", () => {
  const data = () => join(dir, "data");

  it("a new data directory has no entry readable by group or others, the files PGlite wrote while open included", async () => {
    const run = await cli(["migrate"], data());
    expect({ code: run.code }, run.stderr).toEqual({ code: 0 });
    const all = modes(data());
    expect(all.length).toBeGreaterThan(1000);
    // Written by PGlite after it opened (absent from the template): the relcache init files.
    const relcache = all.filter((m) => m.endsWith("pg_internal.init"));
    expect(relcache.map((m) => m.split(" ")[0])).toEqual(["600", "600"]);
    expect(loose(data())).toEqual([]);
  }, 900_000);

  it("a loose data directory is narrowed when a command opens it", async () => {
    loosen(data());
    expect(loose(data()).length).toBeGreaterThan(1000);
    const run = await cli(["status"], data());
    expect({ code: run.code }, run.stderr).toEqual({ code: 0 });
    expect(loose(data())).toEqual([]);
  }, 900_000);
});

describe("the install-time template", () => {
  // The install step run from a copy of the package whose node_modules holds PGlite only, so
  // that it builds its template there and not in the checkout's.
  let root: string;
  const cache = () => join(root, "node_modules", ".cache", "apm-sync");
  const install = () => promisify(execFile)(process.execPath, [join(root, "bin", "pglite-template.js")]);

  beforeAll(() => {
    root = join(dir, "package");
    mkdirSync(join(root, "bin"), { recursive: true });
    mkdirSync(join(root, "node_modules", "@electric-sql"), { recursive: true });
    // A copy: Node runs a linked script from where the link points, which would be the checkout.
    copyFileSync(join(REPO_ROOT, "bin", "pglite-template.js"), join(root, "bin", "pglite-template.js"));
    symlinkSync(
      realpathSync(join(REPO_ROOT, "node_modules", "@electric-sql", "pglite")),
      join(root, "node_modules", "@electric-sql", "pglite"),
    );
  });

  it("is built private, and a loose one is narrowed by the next install", async () => {
    const built = await install();
    expect(built.stdout).toContain("template ready");
    const [name] = readdirSync(cache());
    const tree = join(cache(), name!);
    expect(modes(tree).length).toBeGreaterThan(900);
    expect(loose(tree)).toEqual([]);
    loosen(tree);
    await install();
    expect(loose(tree)).toEqual([]);
  }, 900_000);
});
