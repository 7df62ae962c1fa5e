// The run summary: one line per stream, in catalogue order.
import type { JobResult } from "./run.ts";

export function summaryLines(result: Pick<JobResult, "streams">): string[] {
  const lines: string[] = [];
  for (const [stream, c] of result.streams) {
    const flags = [
      c.failed ? `FAILED ${c.failed}` : "",
      c.truncated ? `TRUNCATED ${c.truncated}` : "",
      c.skipped ? `locked ${c.skipped}` : "",
      c.deferred ? `deferred ${c.deferred}` : "",
      c.textReplaced ? `text replaced ${c.textReplaced}` : "",
    ]
      .filter(Boolean)
      .join(" ");
    lines.push(
      `${stream.padEnd(32)} windows ${pad(c.windows)} rows ${pad(c.rows, 9)} requests ${pad(c.requests)} retries ${pad(c.retries, 4)} splits ${pad(c.splits, 4)} truncated ${pad(c.truncated, 3)} quarantined ${pad(c.quarantined, 4)}${flags ? `  ${flags}` : ""}`,
    );
  }
  return lines;
}

function pad(n: number, width = 6): string {
  return String(n).padStart(width);
}
