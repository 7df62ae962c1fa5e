// `apm-sync status` for a person: one table per project, failed windows listed with their error.
import type { StatusReport, StreamStatus } from "../db/readStatus.ts";
import type { QueueStatus } from "../queue/read-queue.ts";

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

export function formatStatus(report: StatusReport): string {
  if (report.streams.length === 0) return "nothing synced yet: run `apm-sync sync` (or `apm-sync backfill --from .. --to ..`)\n";
  const out: string[] = [];
  const byProject = new Map<number, StreamStatus[]>();
  for (const s of report.streams) byProject.set(s.pcode, [...(byProject.get(s.pcode) ?? []), s]);
  for (const [pcode, streams] of byProject) {
    out.push(pcode === 0 ? "account" : `project ${pcode}`);
    const rows = [["  stream", "watermark", "lag", "last write", "windows", "failed", "truncated", "quarantined"]];
    for (const s of streams) {
      const flag = s.failedWindows > 0 ? " !" : "";
      rows.push([
        `  ${s.stream}${flag}`,
        time(s.watermark),
        humanDuration(s.lagSeconds),
        time(s.lastFinishedAt),
        String(s.doneWindows + s.truncatedWindows + s.failedWindows),
        String(s.failedWindows),
        String(s.truncatedWindows),
        String(s.quarantinedRecords),
      ]);
    }
    out.push(...table(rows), "");
  }
  if (report.failed.length > 0) {
    out.push(`failed windows (${report.failed.length}; the next sync or the same backfill retries them):`);
    for (const f of report.failed)
      out.push(`  ${f.pcode || "account"} ${f.stream} ${time(f.windowStart)} .. ${time(f.windowEnd)}: ${f.error ?? "?"}`);
    out.push("");
  }
  const truncated = report.streams.filter((s) => s.truncatedWindows > 0);
  if (truncated.length > 0) {
    out.push("truncated: a 5-minute window still held more records than the server returns (open_api_max_records);");
    out.push("  the top records are stored and the window is marked; see the README section on truncation.", "");
  }
  const r = report.lastRun;
  if (r) {
    const state = r.status === "running" && !r.alive ? "interrupted (its process is gone; the next run catches up)" : r.status;
    out.push(
      `last run: #${r.id} ${r.command} ${state}, started ${time(r.startedAt)}${r.finishedAt ? `, finished ${time(r.finishedAt)}` : ""}`,
    );
  }
  return `${out.join("\n")}\n`;
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
