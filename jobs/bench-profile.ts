// Sums a V8 CPU profile (`npm run bench -- --cpu-prof DIR`) by function: self time, its share of
// the sampled time and, with --rows N, microseconds per row. Prints the top functions (--top).
//   npx tsx jobs/bench-profile.ts DIR/x.cpuprofile --rows 132000 [--top 40]
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rows: { type: "string" }, top: { type: "string", default: "40" } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write("usage: bench-profile FILE.cpuprofile [--rows N] [--top N]\n");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const nameOf = new Map<number, string>();
for (const { id, callFrame: c } of profile.nodes) {
  const where = c.url ? ` ${basename(c.url)}:${c.lineNumber + 1}` : "";
  nameOf.set(id, `${c.functionName || "(anonymous)"}${where}`);
}
const self = new Map<string, number>();
let total = 0;
let idle = 0;
// A sample's time is the delta to the next sample.
for (let i = 0; i < profile.samples.length; i++) {
  const us = profile.timeDeltas[i + 1] ?? 0;
  const name = nameOf.get(profile.samples[i]!) ?? "?";
  if (name === "(idle)") idle += us;
  else total += us;
  self.set(name, (self.get(name) ?? 0) + us);
}
self.delete("(idle)");
const rows = values.rows ? Number(values.rows) : null;
process.stdout.write(
  `busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s${rows ? `, ${(total / rows).toFixed(2)} us/row` : ""}\n`,
);
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
for (const [name, us] of top) {
  const share = ((us / total) * 100).toFixed(1).padStart(5);
  process.stdout.write(
    `${share}%  ${(us / 1e3).toFixed(0).padStart(6)} ms${rows ? `  ${(us / rows).toFixed(2).padStart(6)} us/row` : ""}  ${name}\n`,
  );
}
