// The folders of src/ stand in floors (jobs/deps.ts, docs/development.md "Layout"): a room imports
// only rooms below it, so none can be read only with another that reads it back.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { layerProblems } from "../../jobs/deps.ts";

const scratch = mkdtempSync(join(tmpdir(), "apm-layers-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(scratch, "t-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("layers", () => {
  it("src/ has no loop between folders and no import running back up", () => {
    expect(layerProblems()).toEqual([]);
  });

  it("names an import from a lower floor to a higher one, and a room on no floor", () => {
    const root = tree({
      "src/kernel/declare.ts": 'import { x } from "../catalogue/index.ts";\n',
      "src/catalogue/index.ts": 'import { y } from "../kernel/declare.ts";\nimport { z } from "../nowhere/z.ts";\n',
    });
    expect(layerProblems(root)).toEqual([
      "src/nowhere: on no floor (add it to FLOORS in jobs/deps.ts)",
      "src/kernel/declare.ts imports src/catalogue (floor 2) from floor 0",
    ]);
  });
});
