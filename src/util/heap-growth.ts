// How far V8 lets the old generation grow past what survived its last full collection before it
// runs the next one. V8 picks that factor from the heap's limit: under the 160 MiB limit the CLI
// runs with (docs/operating.md "Memory") it takes a small device's, at most 1.3. A backfill keeps
// promoting objects (those of its windows in flight, inferred), so it ran a full mark-compact
// every 10 MiB or so: 86 in an 8-day `npm run bench` run, 18 with the factor at 2, and the engine
// spent about a fifth less CPU a row (docs/benchmarks.md, fourteenth sitting). The limit is still
// the guard: V8 sets the next collection at most halfway from what survived to the limit.
// Set at run time, once, by each entry that runs the engine: `--heap-growing-percent` is not
// allowed in NODE_OPTIONS, and an installed `apm-sync` starts with no flags at all. V8 reads it
// each time it sets the next limit, so it takes effect from the first full collection on
// (test/integration/heap-limit.test.ts measures the old space's growth between them).
import { setFlagsFromString } from "node:v8";

/** The factor as V8's flag states it: the next limit is (1 + percent / 100) x what survived. */
const HEAP_GROWING_PERCENT = 100;

/** Lets the old generation double between full collections (see above). */
export function letOldGenerationDouble(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
