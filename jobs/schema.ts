// `apm-sync schema [--markdown|--json]`: the data dictionary (every table, view and column of the
// warehouse). Reads nothing but the catalogue and the drizzle schema: no database, no configuration.
import { dictionaryJson, dictionaryMarkdown, dictionaryText } from "../src/catalogue/dictionary/render.ts";

interface Out {
  write(chunk: string): unknown;
}

export async function run(opts: Record<string, unknown>, _global: Record<string, unknown>, out: Out = process.stdout): Promise<number> {
  if (opts.markdown && opts.json) {
    process.stderr.write("apm-sync schema: choose one of --markdown and --json\n");
    return 2;
  }
  out.write(opts.json ? dictionaryJson() : opts.markdown ? dictionaryMarkdown() : dictionaryText());
  return 0;
}
