// The report's tables: freshness per project, the last runs and why they did not end ok, and the
// problem lists (failed and truncated windows, quarantine, restated windows), each saying how many there are.

import { formatBytes } from "../warehouse/prune-report.ts";
import { type Cell, esc, lag, listTable, percent, projectName, shortTime, table, unbroken, windowText } from "./html.ts";
import type { ReportModel, StreamFigures } from "./model.ts";
import { REPORT_LIMITS } from "./read-report.ts";

/** Rows of a long list shown open; the others the model carries are folded (listTable). */
const SHOWN = 100;
const n = (h: string) => ({ html: h, num: true });

function freshnessRow(s: StreamFigures): Cell[] {
  return [
    s.stream,
    unbroken(shortTime(s.watermark)),
    { html: esc(lag(s.lagMs)), num: true },
    unbroken(shortTime(s.lastWindowEnd)),
    s.windows.done,
    s.windows.truncated,
    s.windows.failed,
    { html: s.coverage === null ? "-" : `${percent(s.coverage.done + s.coverage.truncated)} %`, num: true },
    s.rows,
    s.quarantined,
  ];
}

/** Parts of a project's summary line: what needs a look, counted by kind. */
function lookParts(streams: readonly StreamFigures[]): { parts: string[]; open: boolean } {
  const count = (f: (s: StreamFigures) => boolean) => streams.filter(f).length;
  const failed = count((s) => s.windows.failed > 0);
  const truncated = count((s) => s.windows.truncated > 0);
  // Time not in the ledger beyond a sliver: the bucket under way is partly missing for every stream.
  const missing = count((s) => (s.coverage?.missing ?? 0) > 0.01);
  const parts = [
    failed > 0 ? `${failed} with failed windows` : "",
    missing > 0 ? `${missing} with time missing` : "",
    truncated > 0 ? `${truncated} with truncated windows` : "",
  ].filter(Boolean);
  return { parts: parts.length > 0 ? parts : ["all complete"], open: failed > 0 || missing > 0 };
}

/**
 * One folded table per project (150 flat rows were one long scroll): its summary line says what
 * needs a look; a project with failed windows or missing time is open, the others folded.
 */
function projectFreshness(pcode: number, streams: readonly StreamFigures[]): string {
  const sorted = [...streams].sort((a, b) => (b.lagMs ?? Infinity) - (a.lagMs ?? Infinity) || a.stream.localeCompare(b.stream));
  const look = lookParts(sorted);
  const stalest = sorted.find((s) => s.lagMs !== null);
  const parts = [
    `${sorted.length} ${sorted.length === 1 ? "stream" : "streams"}`,
    ...look.parts,
    ...(stalest ? [`largest lag ${lag(stalest.lagMs)} (${stalest.stream})`] : []),
  ];
  const head = [
    "stream",
    "watermark",
    n("lag"),
    "last window end",
    ...["done", "truncated", "failed", "covered", "rows", "quarantined"].map(n),
  ];
  const title = pcode === 0 ? "Account" : `Project ${pcode}`;
  return `<details class="group"${look.open ? " open" : ""}><summary><b>${esc(title)}</b>: ${esc(parts.join("; "))}</summary>
${table(head, sorted.map(freshnessRow), "No stream.")}</details>`;
}

export function freshness(model: ReportModel): string {
  const projects = [...new Set(model.streams.map((s) => s.pcode))].sort((a, b) => a - b);
  const groups = projects.map((p) =>
    projectFreshness(
      p,
      model.streams.filter((s) => s.pcode === p),
    ),
  );
  return `<h2>Freshness</h2>
<p class="hint">Per project, stalest first. Watermark: the end of the first unbroken run of written windows (a stream with several partitions: the least advanced). Lag: from the watermark to the time of this report; an up-to-date stream lags by the settle time plus its grain. A project with failed windows or time missing is open, the others folded (click a line to open it).</p>
${groups.length === 0 ? `<p class="empty">Nothing synced yet: run apm-sync sync.</p>` : groups.join("\n")}
${runs(model)}`;
}

function runs(model: ReportModel): string {
  const fromLedger = model.runs.some((r) => r.countsFrom === "ledger");
  const mark = (v: number, ledger: boolean) => ({ html: `${esc(v.toLocaleString("en"))}${ledger ? "†" : ""}`, num: true });
  const rows = model.runs.map((r) => [
    n(String(r.id)),
    r.command,
    { html: `<span class="status-${esc(r.status)}">${esc(r.status)}</span>` },
    unbroken(shortTime(r.startedAt)),
    unbroken(shortTime(r.finishedAt)),
    ...[r.windows, r.rows, r.failed, r.truncated].map((v) => mark(v, r.countsFrom === "ledger")),
  ]);
  const head = ["run", "command", "status", "started", "finished", ...["windows", "rows", "failed", "truncated"].map(n)];
  // Below the table, not in a column: a reason is a sentence, and the table scrolls sideways on a phone.
  const why = model.runs
    .filter((r) => r.reason !== null)
    .map((r) => `<li><b>#${r.id} <span class="status-${esc(r.status)}">${esc(r.status)}</span></b>: ${esc(r.reason!)}</li>`);
  const note = fromLedger
    ? `<p class="hint">† The run stored no counts (it did not finish): the windows it committed, and their rows, as the ledger holds them.</p>`
    : "";
  return `<h3>Last runs</h3>
<p class="hint">The last ${REPORT_LIMITS.runs} runs, newest first; every run: <code>SELECT * FROM sync_runs ORDER BY id DESC</code>.</p>
${table(head, rows, "No run recorded.")}${note}${why.length > 0 ? `<ul class="why">${why.join("")}</ul>` : ""}
${verification(model)}
${archived(model)}`;
}

/** The months `prune` archived to Parquet, one line each: tables, rows, size. */
function archived(model: ReportModel): string {
  if (model.archives.length === 0) return "";
  const months = [...new Set(model.archives.map((a) => a.month))].sort();
  const items = months.map((m) => {
    const files = model.archives.filter((a) => a.month === m);
    const rows = files.reduce((n, f) => n + f.rows, 0);
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    return `<li><b>${esc(m)}</b>: ${rows.toLocaleString("en")} rows, ${esc(formatBytes(bytes))} in ${files.length} file(s): ${esc(files.map((f) => f.path).join(", "))}</li>`;
  });
  return `<h3>Archived months</h3>
<p class="hint">Dropped by <code>prune</code> after being written to Parquet under APM_ARCHIVE (paths relative to it; shown as pruned in the heat map). <code>apm-sync restore --months YYYY-MM</code> loads a month back; docs/archive.md reads them beside the warehouse without restoring.</p>
<ul>${items.join("")}</ul>`;
}

/** When the copy was last proven equal to the server (`apm-sync verify`), over which range. */
function verification(model: ReportModel): string {
  const v = model.lastVerification;
  if (!v)
    return `<p class="hint">Never verified: <code>apm-sync verify --from T --to T</code> fetches stored windows again and compares them.</p>`;
  const failed = v.failed > 0 ? `, ${v.failed.toLocaleString("en")} could not be fetched` : "";
  const status = v.differing > 0 || v.failed > 0 ? "partial" : "ok";
  return `<p>Last verification: #${v.id}, finished ${esc(shortTime(v.finishedAt))}, over ${esc(windowText(v.from, v.to))}: ${v.checked.toLocaleString("en")} windows checked, <span class="status-${status}">${v.differing.toLocaleString("en")} differing</span>${esc(failed)}.</p>`;
}

const LEDGER_QUERY = (status: string) =>
  `<code>SELECT * FROM sync_windows WHERE status = '${status}' ORDER BY window_start DESC</code> in the warehouse`;

export function problems(model: ReportModel): string {
  const failed = model.failedWindows.map((f) => [
    projectName(f.pcode),
    f.stream,
    unbroken(windowText(f.windowStart, f.windowEnd)),
    { html: esc(f.error ?? "-"), wrap: true },
  ]);
  const truncated = model.truncatedWindows.map((t) => [
    projectName(t.pcode),
    t.stream,
    unbroken(windowText(t.windowStart, t.windowEnd)),
    t.expected ?? "-",
    t.fetched,
    t.expected === null ? "-" : Math.max(0, t.expected - t.fetched),
  ]);
  const quarantine = model.quarantine.map((q) => [
    projectName(q.pcode),
    q.stream,
    { html: esc(q.reason), wrap: true },
    q.records,
    unbroken(shortTime(q.lastAt)),
  ]);
  const { totals } = model;
  const restated = model.restatements.map((r) => [
    projectName(r.pcode),
    r.stream,
    unbroken(windowText(r.windowStart, r.windowEnd)),
    `${r.rowsBefore} → ${r.rowsAfter}`,
    r.measure ? `${r.measure} ${r.measureBefore} → ${r.measureAfter}` : "-",
    unbroken(shortTime(r.detectedAt)),
  ]);
  return `<h2>Failed windows</h2>
<p class="hint">Windows whose fetch failed, with the error of the last attempt; the next sync (or the same backfill) retries them first. Newest first.</p>
${listTable(["project", "stream", "window", "error"], failed, "None.", { what: "failed windows", total: totals.failedWindows, shown: SHOWN, rest: LEDGER_QUERY("failed") })}
<h2>Truncated windows</h2>
<p class="hint">A 5-minute window still held more records than the server returns per request: the top records are stored, the rest cannot be fetched through the API (raise <code>open_api_max_records</code> and backfill the range). Newest first.</p>
${listTable(["project", "stream", "window", n("expected"), n("fetched"), n("not fetched")], truncated, "None: every window was fetched whole.", { what: "truncated windows", total: totals.truncatedWindows, shown: SHOWN, rest: LEDGER_QUERY("truncated") })}
<h2>Quarantined records</h2>
<p class="hint">Records that failed validation, per stream and reason, largest groups first; their raw JSON is in the <code>quarantine</code> table. They never block a window.</p>
${listTable(["project", "stream", "reason", n("records"), "latest window"], quarantine, "None.", { what: "groups of quarantined records", total: totals.quarantine, shown: 50, rest: "<code>SELECT stream, pcode, reason, count(*) FROM quarantine GROUP BY 1, 2, 3</code> in the warehouse" })}
<h2>Restated windows</h2>
<p class="hint">Windows fetched again (lookback, <code>backfill --refetch</code>) whose rows differed from those stored: the server restated them. Rows and the stream's measure before and after; newest first.</p>
${listTable(["project", "stream", "window", "rows", "measure", "seen"], restated, "None: every window fetched again came back the same.", { what: "restated windows", total: totals.restatements, shown: 50, rest: "<code>SELECT * FROM restatements ORDER BY detected_at DESC</code> in the warehouse" })}`;
}
