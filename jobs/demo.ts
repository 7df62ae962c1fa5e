// `apm-sync demo [--json] [--data-dir DIR]`: sandbox + embedded database + a real sync + a report.
import { runDemo } from "../src/demo/run-demo.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  return runDemo({ dataDir: typeof opts.dataDir === "string" ? opts.dataDir : ".apm-sync", json: opts.json === true, global });
}
