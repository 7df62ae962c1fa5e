// Reads the README's exit code table ("### Exit codes"): command -> the codes it may exit with.

/** `enqueue backfill` -> [0, 1, 2]; `sync` -> [0, 1, 2, 130, 143]. */
export type ExitTable = Map<string, number[]>;

export function readExitTable(readme: string): ExitTable {
  const section = readme.split("### Exit codes")[1]?.split(/\n#{2,3} /)[0];
  if (!section) throw new Error('README has no "### Exit codes" section');
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  const table: ExitTable = new Map();
  for (const row of rows) {
    const [commands, zero, one, two, signal] = row
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    const codes = [
      ...[zero, one, two].flatMap((cell, code) => (cell && cell !== "-" ? [code] : [])),
      ...[...(signal ?? "").matchAll(/\b(130|143)\b/g)].map((m) => Number(m[1])),
    ];
    for (const m of (commands ?? "").matchAll(/`([^`]+)`/g)) table.set(m[1]!, codes);
  }
  return table;
}
