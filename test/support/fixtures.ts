// Where the tests' fixture files live: test/fixtures/ of this repository (it stands alone: no test
// reads a file outside it).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = fileURLToPath(new URL("../fixtures", import.meta.url));

/** Absolute path of a fixture (`fixturePath("api-samples")`); throws naming it when it is missing. */
export function fixturePath(...parts: string[]): string {
  const path = join(FIXTURES, ...parts);
  if (!existsSync(path)) throw new Error(`test fixture ${join("test/fixtures", ...parts)} is missing`);
  return path;
}
