// `apm-sync schema [--markdown|--json|--dbt]`: the data dictionary (every table, view and column of
// the warehouse). Reads nothing but the catalogue and the drizzle schema: no database. `--dbt` also
// reads the configuration (no API address needed): the schema's name and the grains its freshness
// thresholds come from.

import { loadConfig } from "../src/config.ts";
import { dictionaryJson, dictionaryMarkdown, dictionaryText } from "../src/dictionary/render.ts";
import { dbtSources } from "../src/warehouse/dbt-sources.ts";

interface Out {
  write(chunk: string): unknown;
}

const FORMATS = ["markdown", "json", "dbt"] as const;

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>, out: Out = process.stdout): Promise<number> {
  const chosen = FORMATS.filter((f) => opts[f]);
  if (chosen.length > 1) {
    process.stderr.write(`apm-sync schema: choose one of ${FORMATS.map((f) => `--${f}`).join(", ")}\n`);
    return 2;
  }
  if (opts.dbt) {
    // A ConfigError goes to the CLI, which prints it (as JSON under --log-format json) and exits 2.
    const configFile = typeof global.config === "string" ? global.config : undefined;
    out.write(dbtSources(loadConfig({ configFile, flags: { logFormat: global.logFormat } })));
    return 0;
  }
  out.write(opts.json ? dictionaryJson() : opts.markdown ? dictionaryMarkdown() : dictionaryText());
  return 0;
}
