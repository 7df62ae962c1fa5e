// `npm run -s deps`: the import graph of src/ by room (a folder under src/, or a file at its top),
// held to the floors declared below: a room imports only rooms on lower floors, so no two rooms
// import each other and no import runs back up. Prints each room's floor and what it imports, then
// every import that breaks the rule (exit 1 when there is one). test/unit/layers.test.ts runs it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { packageRoot } from "../src/util/package-root.ts";

/** The floors, ground first (docs/development.md "Layout"). */
export const FLOORS: readonly (readonly string[])[] = [
  ["src/kernel", "src/util", "src/windows", "src/cli-help.ts"],
  ["src/schemas", "src/shutdown.ts"],
  ["src/catalogue"],
  ["src/db", "src/sandbox"],
  ["src/config", "src/dictionary"],
  ["src/config.ts", "src/usage-error.ts", "src/cli-command.ts"],
  ["src/tracing", "src/preflight.ts"],
  ["src/api", "src/warehouse"],
  ["src/engine"],
  ["src/queue", "src/check"],
  ["src/metrics", "src/report"],
  ["src/app.ts"],
  ["src/demo"],
  ["src/cli.ts"],
];

const IMPORT = /(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** The room of a file of src/ (its top folder, or itself at the top). */
function roomOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Every import between two rooms of src/: `from` -> `to`, with the importing file. */
export function roomImports(root = packageRoot()): { from: string; to: string; file: string }[] {
  return sourceFiles(join(root, "src")).flatMap((path) => {
    const file = relative(root, path);
    return [...readFileSync(path, "utf8").matchAll(IMPORT)]
      .map((m) => normalize(join(dirname(file), m[1]!)))
      .filter((target) => target.startsWith("src/"))
      .map((target) => ({ from: roomOf(file), to: roomOf(target), file }))
      .filter((i) => i.from !== i.to);
  });
}

/** The imports that do not go down a floor, and the rooms no floor names. */
export function layerProblems(root = packageRoot()): string[] {
  const floor = new Map(FLOORS.flatMap((rooms, i) => rooms.map((r): [string, number] => [r, i])));
  const imports = roomImports(root);
  const unplaced = [...new Set(imports.flatMap((i) => [i.from, i.to]))].filter((r) => !floor.has(r));
  const upward = imports.filter((i) => floor.has(i.from) && floor.has(i.to) && floor.get(i.to)! >= floor.get(i.from)!);
  return [
    ...unplaced.map((r) => `${r}: on no floor (add it to FLOORS in jobs/deps.ts)`),
    ...upward.map((i) => `${i.file} imports ${i.to} (floor ${floor.get(i.to)}) from floor ${floor.get(i.from)}`),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const imports = roomImports();
  FLOORS.forEach((rooms, i) => {
    for (const room of rooms) {
      const below = [...new Set(imports.filter((m) => m.from === room).map((m) => m.to))].sort();
      process.stdout.write(`floor ${String(i).padStart(2)}  ${room.padEnd(20)} -> ${below.join(", ") || "(nothing of the project)"}\n`);
    }
  });
  const problems = layerProblems();
  for (const p of problems) process.stdout.write(`problem: ${p}\n`);
  process.stdout.write(problems.length === 0 ? "no loop, no import running back up\n" : `${problems.length} problem(s)\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
