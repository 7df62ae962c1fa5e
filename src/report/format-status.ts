// `apm-sync status` for a person: one table per project (the streams that never ran too), failed
// windows grouped by error with what to do once.
import type { VerificationRow } from "../db/ledger/verifications.ts";
import type { QueueStatus } from "../queue/read-queue.ts";
import { formatBytes } from "../warehouse/prune-report.ts";
import type { FailureGroup, StatusModel, StatusStream } from "./status-model.ts";

/** 0s, 45s, 13m, 2h05m, 3d04h. */
export function humanDuration(seconds: number | null): string {
  if (seconds === null) return "-";
  if (seconds < 60) return `${seconds}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

function time(d: Date | null): string {
  return d ? `${d.toISOString().slice(0, 16).replace("T", " ")}Z` : "-";
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i >= 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

/** How many groups of failed windows the text lists (--json has them all). */
const GROUPS_LISTED = 20;
/** Stream names shown per group before "+N more". */
const STREAMS_NAMED = 4;

export function formatStatus(model: StatusModel): string {
  const out: string[] = [];
  if (model.configProblem) out.push(`configured streams unknown (${model.configProblem}); showing the ledger only`, "");
  if (model.streams.every((s) => s.neverRun))
    out.push("nothing synced yet: run `apm-sync sync` (or `apm-sync backfill --from .. --to ..`)", "");
  const byProject = new Map<number, StatusStream[]>();
  for (const s of model.streams) byProject.set(s.pcode, [...(byProject.get(s.pcode) ?? []), s]);
  for (const [pcode, streams] of byProject) {
    const never = streams.filter((s) => s.neverRun).length;
    out.push(`${pcode === 0 ? "account" : `project ${pcode}`}${never > 0 ? ` (${never} of ${streams.length} streams never run)` : ""}`);
    out.push(...table([STREAM_HEAD, ...streams.map(streamRow)]), "");
  }
  out.push(...failedText(model.failed));
  out.push(...holesText(model.holes));
  out.push(...restatedText(model.restatements));
  if (model.streams.some((s) => s.truncatedWindows > 0)) {
    out.push("truncated: a 5-minute window still held more records than the server returns (open_api_max_records);");
    out.push('  the top records are stored and the window is marked; see "Truncated windows" in docs/operating.md.', "");
  }
  if (model.streams.some((s) => s.prunedWindows > 0)) {
    out.push("pruned before: `prune` dropped the rows of the windows before that day (the retention, APM_RETENTION);");
    out.push("  that time is accounted for, not missing, and a backfill into it is refused.", "");
  }
  out.push(...archivesText(model.archives));
  const r = model.lastRun;
  if (r) {
    const state = r.status === "running" && !r.alive ? "interrupted (its process is gone; the next run catches up)" : r.status;
    out.push(
      `last run: #${r.id} ${r.command} ${state}, started ${time(r.startedAt)}${r.finishedAt ? `, finished ${time(r.finishedAt)}` : ""}`,
    );
  }
  const v = model.lastVerification;
  if (v) out.push(verificationText(v));
  return `${out.join("\n").replace(/\n+$/, "")}\n`;
}

/** `last verification: finished T, 2026-01-01 .. 2026-02-01: 120 windows checked, 0 differing`. */
export function verificationText(v: VerificationRow): string {
  const failed = v.failed > 0 ? `, ${v.failed} could not be fetched` : "";
  const advice = v.differing > 0 ? " (`apm-sync verify` names them; `backfill --refetch` of them stores the server's answer)" : "";
  return (
    `last verification: #${v.id} finished ${time(v.finishedAt)} over ${time(new Date(v.from))} .. ${time(new Date(v.to))}: ` +
    `${v.checked} window(s) checked, ${v.differing} differing${failed}${advice}`
  );
}

const STREAM_HEAD = ["  stream", "watermark", "lag", "last write", "windows", "failed", "truncated", "quarantined", "pruned before"];

function streamRow(s: StatusStream): string[] {
  if (s.neverRun) return [`  ${s.stream}`, "never run", "-", "-", "0", "0", "0", "0", "-"];
  return [
    `  ${s.stream}${s.failedWindows > 0 ? " !" : ""}`,
    time(s.watermark),
    humanDuration(s.lagSeconds),
    time(s.lastFinishedAt),
    String(s.doneWindows + s.truncatedWindows + s.failedWindows),
    String(s.failedWindows),
    String(s.truncatedWindows),
    String(s.quarantinedRecords),
    s.prunedUntil ? s.prunedUntil.toISOString().slice(0, 10) : "-",
  ];
}

/** One line per archived month: its tables, rows and size, and where the files are. */
function archivesText(archives: StatusModel["archives"]): string[] {
  if (archives.length === 0) return [];
  const months = new Map<string, StatusModel["archives"][number][]>();
  for (const a of archives) months.set(a.month, [...(months.get(a.month) ?? []), a]);
  const out = [
    "archived months (Parquet under APM_ARCHIVE, <table>/month=YYYY-MM/part-0.parquet; `apm-sync restore --months` loads them back):",
  ];
  for (const [month, files] of [...months].sort((a, b) => a[0].localeCompare(b[0]))) {
    const rows = files.reduce((n, f) => n + f.rows, 0);
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    const tables = files.map((f) => f.table).sort();
    out.push(`  ${month}  ${rows.toLocaleString("en")} rows, ${formatBytes(bytes)} in ${tables.length} file(s): ${tables.join(", ")}`);
  }
  return [...out, ""];
}

/** One line per group of identical errors (x count, where, when), each piece of advice once. */
function failedText(failed: StatusModel["failed"]): string[] {
  if (failed.total === 0) return [];
  const { groups } = failed;
  const listed = groups.slice(0, GROUPS_LISTED);
  const kinds = groups.length === 1 ? "one error" : `${groups.length} different errors`;
  const shown = listed.length < groups.length ? `, the ${listed.length} most frequent listed (all in --json)` : "";
  const out = [`failed windows: ${failed.total} (${kinds}${shown}; the next sync or the same backfill retries them):`];
  const advised = new Set<string>();
  const width = `x${listed[0]?.windows ?? 0}`.length;
  for (const g of listed) {
    out.push(`  ${`x${g.windows}`.padEnd(width)}  ${g.error}`);
    out.push(`        ${where(g)}; windows ${time(g.firstStart)} .. ${time(g.lastEnd)}`);
    if (g.advice && !advised.has(g.advice)) out.push(`        what to do: ${g.advice}`);
    if (g.advice) advised.add(g.advice);
  }
  return [...out, ""];
}

/** How many holes the text lists (--json has them all). */
const HOLES_LISTED = 50;

/** One line per hole: where, and the time no window covers. */
function holesText(holes: StatusModel["holes"]): string[] {
  if (holes.length === 0) return [];
  const shown = holes.length > HOLES_LISTED ? `, the first ${HOLES_LISTED} listed (all in --json)` : "";
  const out = [
    `holes in the ledger: ${holes.length} (time no window covers between a stream's first and last window${shown}; the next sync fetches them):`,
  ];
  for (const h of holes.slice(0, HOLES_LISTED)) {
    out.push(`  ${sliceName(h)}: ${time(h.start)} .. ${time(h.end)}`);
  }
  return [...out, ""];
}

/** A stream of a project (or of the account), with its partition when it has several. */
function sliceName(s: { readonly pcode: number; readonly stream: string; readonly partition: string }): string {
  const partition = s.partition && s.partition !== String(s.pcode) ? ` [${s.partition}]` : "";
  return `${s.pcode === 0 ? "account" : `project ${s.pcode}`} ${s.stream}${partition}`;
}

/** The latest restated windows: where, and what the server said before and after. */
function restatedText(r: StatusModel["restatements"]): string[] {
  if (r.total === 0) return [];
  const shown = r.total > r.rows.length ? `, the latest ${r.rows.length} listed (all in the restatements table)` : "";
  const out = [`restated windows: ${r.total} (fetched again, the server answered differently${shown}):`];
  for (const x of r.rows) {
    const measure = x.measure ? `, ${x.measure} ${x.measureBefore} -> ${x.measureAfter}` : "";
    out.push(
      `  ${sliceName(x)}: ${time(x.windowStart)} .. ${time(x.windowEnd)}: rows ${x.rowsBefore} -> ${x.rowsAfter}${measure} (seen ${time(x.detectedAt)})`,
    );
  }
  return [...out, ""];
}

function where(g: FailureGroup): string {
  const named = g.streams.slice(0, STREAMS_NAMED).join(", ");
  const more = g.streams.length > STREAMS_NAMED ? ` +${g.streams.length - STREAMS_NAMED} more` : "";
  const projects = g.pcodes.map((p) => (p === 0 ? "account" : String(p)));
  const who = projects.length === 1 ? (g.pcodes[0] === 0 ? "account" : `project ${projects[0]}`) : `projects ${projects.join(", ")}`;
  return `${who}: ${named}${more}`;
}

/** The job queue section of `status` (scale-out). */
export function formatQueue(q: QueueStatus): string {
  const out = [
    "",
    `queue (${q.schema}): ${q.queued} queued, ${q.retrying} waiting for a retry, ${q.running.length} running, ${q.failedForGood.length} failed for good`,
  ];
  for (const r of q.running) out.push(`  running  ${r.job} on ${r.workerId} since ${time(r.since)}`);
  for (const f of q.failedForGood) out.push(`  FAILED   ${f.job} after ${f.attempts} attempt(s): ${f.lastError?.split("\n")[0] ?? "?"}`);
  out.push(q.workers.length === 0 ? "workers: none seen recently" : `workers seen recently: ${q.workers.length}`);
  for (const w of q.workers) out.push(`  ${w.workerId} on ${w.host} pid ${w.pid}, seen ${time(w.seenAt)}`);
  return `${out.join("\n")}\n`;
}
