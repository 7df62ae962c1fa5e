// "Did you mean": the closest known name to a mistyped one (config keys, stream ids, APM_*
// variables). Commands and flags get commander's own suggestions instead.
import { closest, distance } from "fastest-levenshtein";

/** The known name closest to `name`, when it is close enough to be a typo; null otherwise. */
function closestName(name: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const best = closest(name, known);
  // Case alone is a typo too (`apm_rps`); otherwise allow about one edit in three characters.
  if (best.toLowerCase() === name.toLowerCase()) return best;
  return distance(name.toLowerCase(), best.toLowerCase()) <= Math.max(2, Math.floor(name.length / 3)) ? best : null;
}

/** ` (did you mean X?)` or an empty string. */
export function didYouMean(name: string, known: readonly string[]): string {
  const best = closestName(name, known);
  return best === null ? "" : ` (did you mean ${best}?)`;
}
