// `apm-sync streams [--json]`: the operation catalogue as a table (or a JSON array). Reads nothing
// but the catalogue, so it works without configuration or database.
import { OPERATIONS } from "../src/catalogue/index.ts";
import { DAY, HOUR, MINUTE, type OperationDef } from "../src/catalogue/types.ts";
import { requestedLogFormat } from "../src/config.ts";

/** One catalogue line, as printed by `streams --json`. */
export interface StreamLine {
  id: string;
  method: "GET" | "POST";
  path: string;
  token: string;
  windowLimitMs: number | null;
  limit: string;
  kind: string;
  table: string;
  enabledByDefault: boolean | null;
  inSpec: boolean;
  /** false: no table; `sync --streams` refuses it (docs-only extras, averages over a chosen agent list). */
  syncable: boolean;
}

/** 3_600_000 -> "1h", 31 days -> "31d", null -> "-". */
export function formatLimit(ms: number | null): string {
  if (ms === null) return "-";
  for (const [unit, size] of [
    ["d", DAY],
    ["h", HOUR],
    ["m", MINUTE],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

export function streamLine(op: OperationDef): StreamLine {
  return {
    id: op.id,
    method: op.method,
    path: op.path,
    // The parameter table's token first, then the one the spec's sample request sends.
    token: op.altToken ? `${op.token}|${op.altToken}` : op.token,
    windowLimitMs: op.windowLimitMs,
    limit: formatLimit(op.windowLimitMs),
    kind: op.stream?.kind ?? "-",
    table: op.stream?.table ?? "-",
    enabledByDefault: op.stream ? op.stream.enabledByDefault : null,
    inSpec: op.inSpec,
    syncable: op.stream !== undefined,
  };
}

const HEADER = ["OPERATION", "ENDPOINT", "TOKEN", "LIMIT", "KIND", "TABLE", "DEFAULT"];
const OTHER_HEADER = ["OPERATION", "ENDPOINT", "TOKEN", "LIMIT", "WHY NOT SYNCED"];

function cells(line: StreamLine): string[] {
  const onOff = line.enabledByDefault === null ? "-" : line.enabledByDefault ? "on" : "off";
  return [line.id, `${line.method} ${line.path}`, line.token, line.limit, line.kind, line.table, onOff];
}

function otherCells(line: StreamLine): string[] {
  const why = line.inSpec
    ? "client only: an average over a chosen agent list has no key in metric_points"
    : "docs-only operation (not in the spec)";
  return [line.id, `${line.method} ${line.path}`, line.token, line.limit, why];
}

/** Left-aligned columns separated by two spaces. */
export function formatTable(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

interface Out {
  write(chunk: string): unknown;
}

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>, out: Out = process.stdout): Promise<number> {
  const lines = OPERATIONS.map(streamLine);
  // With JSON logs every line is JSON: the --json document on one line.
  if (requestedLogFormat(global.logFormat) === "json") {
    out.write(`${JSON.stringify(lines)}\n`);
    return 0;
  }
  if (opts.json) {
    out.write(`${JSON.stringify(lines, null, 2)}\n`);
    return 0;
  }
  const streams = lines.filter((l) => l.syncable);
  const others = lines.filter((l) => !l.syncable);
  out.write(formatTable([HEADER, ...streams.map(cells)]));
  out.write(`\n${streams.length} streams. Not synced (no table; \`sync --streams\` refuses them), ${others.length} operations:\n\n`);
  out.write(formatTable([OTHER_HEADER, ...others.map(otherCells)]));
  return 0;
}
