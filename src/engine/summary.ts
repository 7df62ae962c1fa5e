// The run summary: one line per stream, sorted by stream id (runs finish streams in any order),
// as text or as one JSON record per stream, and the run's closing line.
import type { Output } from "../util/logger.ts";
import type { StreamCounts } from "./types.ts";

/** `window` for 1, `windows` otherwise; `retry` -> `retries`. */
export function nounFor(n: number, noun: string): string {
  if (n === 1) return noun;
  return noun.endsWith("y") ? `${noun.slice(0, -1)}ies` : `${noun}s`;
}

/** `1 window`, `2 windows`, `1 retry`, `3 retries`. */
export function plural(n: number, noun: string): string {
  return `${n} ${nounFor(n, noun)}`;
}

// Counter, its noun (null: an adjective, never pluralised), and the width of the number.
const COLUMNS = [
  ["windows", "window", 6],
  ["rows", "row", 9],
  ["requests", "request", 6],
  ["retries", "retry", 4],
  ["splits", "split", 4],
  ["truncated", null, 3],
  ["quarantined", null, 4],
] as const;

function textLine(stream: string, c: Readonly<StreamCounts>): string {
  const cells = COLUMNS.map(([key, noun, width]) => {
    const word = noun === null ? key : nounFor(c[key], noun).padEnd(nounFor(2, noun).length);
    return `${String(c[key]).padStart(width)} ${word}`;
  });
  const flags = [
    c.failed ? `FAILED ${c.failed}` : "",
    c.truncated ? `TRUNCATED ${c.truncated}` : "",
    c.skipped ? `locked ${c.skipped}` : "",
    c.deferred ? `deferred ${c.deferred}` : "",
    c.textReplaced ? `text replaced ${c.textReplaced}` : "",
  ].filter(Boolean);
  return `${stream.padEnd(32)}${cells.join(" ")}${flags.length > 0 ? `  ${flags.join(" ")}` : ""}`;
}

/** One line (or JSON record) per stream, by stream id. */
export function printSummary(out: Output, streams: ReadonlyMap<string, Readonly<StreamCounts>>): void {
  for (const [stream, counts] of [...streams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    out.print(textLine(stream, counts), { msg: "stream summary", stream, ...counts });
}

type RunEnd = "complete" | "failed" | "cancelled" | "unreachable";

export function runEnd(result: { readonly cancelled: boolean; readonly exitCode: number; readonly unreachable?: string | null }): RunEnd {
  if (result.cancelled) return "cancelled";
  if (result.unreachable) return "unreachable";
  return result.exitCode === 0 ? "complete" : "failed";
}

/** `run 7: complete`, with what to do next when it is not. */
export function printRunEnd(out: Output, runId: number, end: RunEnd, retryHint: string): void {
  const text = {
    complete: "complete",
    failed: `some windows failed (${retryHint})`,
    cancelled: "cancelled (stopped by a signal; the next run fetches the rest)",
    unreachable: "stopped: the server cannot be reached (see the error above); the next run fetches the rest",
  }[end];
  out.print(`run ${runId}: ${text}`, { msg: `run ${runId}: ${end}`, runId, status: end });
}
