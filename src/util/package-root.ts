// The package root (where package.json and migrations/ live), found upward from this module, so
// that `src/` under tsx and `dist/src/` in the image resolve the same files.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("package.json not found above " + fileURLToPath(import.meta.url));
    dir = up;
  }
  root = dir;
  return dir;
}

export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;
}
