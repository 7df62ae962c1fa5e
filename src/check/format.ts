// What `check` prints: a table a person reads top to bottom, or one JSON object for scripts.
// Names only, never values: header names are shown, tokens never (they are not in the report).
// What the server sent (record keys it added, values quoted in a reason, error texts) is shown
// with its control characters escaped: a key holding ESC sequences must not drive the terminal.
import type { Config } from "../config.ts";
import { terminalSafe, terminalSafeJson, terminalSafeLines } from "../util/terminal-text.ts";
import type { ProbeResult, ProbeStatus } from "./probe.ts";
import type { CheckReport } from "./run-check.ts";

const STATUSES: readonly ProbeStatus[] = ["ok", "auth", "not-found", "error", "skipped"];

/**
 * The `--json` object: `{ok, serverClockOffsetMs, headers, window, operations: [...]}`; on one
 * line with `compact` (JSON logs). The strings are the server's as sent, escaped as JSON.
 */
export function checkJson(report: CheckReport, compact = false): string {
  const operations = report.operations.map((r) => ({
    id: r.id,
    pcode: r.pcode,
    status: r.status,
    token: r.token,
    httpStatus: r.httpStatus,
    records: r.records,
    ms: r.ms,
    message: r.message,
    partition: r.partition,
    drift: r.drift,
  }));
  const window = { start: new Date(report.window.start).toISOString(), end: new Date(report.window.end).toISOString() };
  const { ok, serverClockOffsetMs, headers, advice } = report;
  const out = { ok, serverClockOffsetMs, headers, window, operations, advice };
  return `${terminalSafeJson(JSON.stringify(out, null, compact ? undefined : 2))}\n`;
}

export function formatCheck(report: CheckReport, api: Config["api"]): string {
  const lines = [
    `server: ${safeUrl(api.baseUrl)}${api.proxy ? ` (through the proxy ${proxyNames(api.proxy)})` : ""}`,
    `headers: token "${report.headers.token}", project code "${report.headers.pcode}"`,
    `server clock: ${clockText(report.serverClockOffsetMs)}`,
    `probe window of windowed operations: ${iso(report.window.start)} .. ${iso(report.window.end)} (server time)`,
    "",
    row(["operation", "project", "status", "token", "http", "records", "ms", "notes"]),
    ...tableRows(report.operations),
    "",
    summary(report),
    ...report.advice.map((a) => `=> ${terminalSafe(a)}`),
  ];
  return `${terminalSafeLines(lines.join("\n"))}\n`;
}

/**
 * One row per probe; failures and skips with the same reason for one project are one line (a
 * wrong token fails all ~50 operations of its project alike).
 */
function tableRows(results: readonly ProbeResult[]): string[] {
  const groups = new Map<string, number>();
  for (const r of results) if (groupable(r)) groups.set(groupKey(r), (groups.get(groupKey(r)) ?? 0) + 1);
  const printed = new Set<string>();
  const out: string[] = [];
  for (const r of results) {
    const count = groupable(r) ? (groups.get(groupKey(r)) ?? 1) : 1;
    if (count === 1) {
      out.push(
        row([
          r.id,
          r.pcode === null ? "-" : String(r.pcode),
          r.status,
          r.token ?? "-",
          num(r.httpStatus),
          num(r.records),
          num(r.ms),
          notes(r),
        ]),
      );
    } else if (!printed.has(groupKey(r))) {
      printed.add(groupKey(r));
      out.push(`${r.pcode === null ? "account" : `project ${r.pcode}`}: ${count} operations ${r.status}: ${terminalSafe(r.message ?? "")}`);
    }
  }
  return out;
}

function groupable(r: ProbeResult): boolean {
  return r.status !== "ok";
}

function groupKey(r: ProbeResult): string {
  return `${r.pcode}\u0000${r.status}\u0000${r.message}`;
}

/** The message of a failure; for an answer: which partition was probed and any drift. */
function notes(r: ProbeResult): string {
  if (r.status !== "ok") return terminalSafe(r.message ?? "");
  const parts: string[] = [];
  if (r.partition) parts.push(`probed ${/^\d+$/.test(r.partition) ? "project" : "group"} ${terminalSafe(r.partition)}`);
  const d = r.drift;
  if (d && (d.unknownFields.length > 0 || d.quarantined > 0)) {
    const fields = d.unknownFields.map((f) => `+${terminalSafe(f)}`).join(",");
    const quarantined = d.quarantined > 0 ? `${d.quarantined} quarantined (${clip(terminalSafe(d.firstReason ?? ""), 80)})` : "";
    parts.push(`drift: ${[fields, quarantined].filter(Boolean).join("; ")}`);
  }
  return parts.join("; ");
}

function summary(report: CheckReport): string {
  const counts = STATUSES.map((s) => `${report.operations.filter((r) => r.status === s).length} ${s}`).join(", ");
  const verdict = report.ok
    ? "every probe answered: `apm-sync sync` can start"
    : report.advice.length > 0
      ? "fix this first, then run check again:"
      : "fix what the notes say (tokens, header names, overrides, network), then run check again";
  return `${counts}: ${verdict}`;
}

function row(cells: readonly string[]): string {
  const widths = [34, 11, 9, 8, 5, 8, 7];
  return cells
    .map((c, i) => {
      const w = widths[i];
      if (w === undefined) return c;
      return i >= 4 && i <= 6 ? c.padStart(w) : c.padEnd(w);
    })
    .join(" ")
    .trimEnd();
}

/** `-3h 0m 0.2s (the server's clock is behind ours)`. */
export function clockText(offsetMs: number | null): string {
  if (offsetMs === null) return "unknown (no answer carried a Date header or a timestamp)";
  const abs = Math.abs(offsetMs);
  const h = Math.floor(abs / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const s = ((abs % 60_000) / 1000).toFixed(1);
  const text = `${offsetMs < 0 ? "-" : "+"}${h > 0 ? `${h}h ` : ""}${h > 0 || m > 0 ? `${m}m ` : ""}${s}s`;
  const side = abs < 1000 ? "in step with ours" : offsetMs < 0 ? "behind ours" : "ahead of ours";
  return `${text} (${side}; offset ${offsetMs} ms)`;
}

function num(v: number | null): string {
  return v === null ? "-" : String(v);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(":00.000Z", "Z");
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** The base URL without any user:password part. */
function safeUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "(not a URL)";
  }
  u.username = "";
  u.password = "";
  return u.toString().replace(/\/$/, "");
}

function proxyNames(proxy: NonNullable<Config["api"]["proxy"]>): string {
  const hosts = [...new Set([proxy.httpsProxy, proxy.httpProxy].filter(Boolean).map(safeUrl))];
  return `${hosts.join(", ")}${proxy.noProxy ? `, NO_PROXY=${proxy.noProxy}` : ""}`;
}
