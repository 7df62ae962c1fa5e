// Small HTML helpers of the report page: escaping, tables, time and number formats.
import { humanDuration } from "./format-status.ts";

const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text from the database (stream ids, error texts, quarantine reasons) is never trusted as markup. */
export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** A cell: text (escaped), or pre-built markup. Numbers are right-aligned; `wrap` text may wrap (an error). */
export type Cell = string | number | { readonly html: string; readonly num?: boolean; readonly wrap?: boolean };

function cell(c: Cell, tag: "td" | "th"): string {
  if (typeof c === "number") return `<${tag} class="num">${esc(formatNumber(c))}</${tag}>`;
  if (typeof c === "string") return `<${tag}>${esc(c)}</${tag}>`;
  const cls = [c.num ? "num" : "", c.wrap ? "wrap" : ""].filter(Boolean).join(" ");
  return `<${tag}${cls ? ` class="${cls}"` : ""}>${c.html}</${tag}>`;
}

export function table(head: readonly Cell[], rows: readonly (readonly Cell[])[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const body = rows.map((r) => `<tr>${r.map((c) => cell(c, "td")).join("")}</tr>`).join("\n");
  // Wide tables scroll sideways on a narrow screen, never in a box of fixed height (it cut rows when printed).
  return `<div class="table-wrap"><table><thead><tr>${head.map((c) => cell(c, "th")).join("")}</tr></thead>\n<tbody>\n${body}\n</tbody></table></div>`;
}

export interface ListCut {
  /** What the rows are, plural ("truncated windows"). */
  readonly what: string;
  /** How many there are in all (the rows given are the first of them). */
  readonly total: number;
  /** Rows shown open; the others given are folded below them. */
  readonly shown: number;
  /** Where the ones not given are: a query or a command, as markup. */
  readonly rest: string;
}

/**
 * A long list, said as long: how many there are, the first `shown` rows, the others folded in a
 * <details> (the page has no script: folding is its paging), and where the ones the page does not
 * carry are. A table showed 100 of 910 rows without a word.
 */
export function listTable(head: readonly Cell[], rows: readonly (readonly Cell[])[], empty: string, cut: ListCut): string {
  if (rows.length === 0) return table(head, rows, empty);
  const n = (x: number) => x.toLocaleString("en");
  const open = rows.slice(0, cut.shown);
  const folded = rows.slice(cut.shown);
  const missing = cut.total - rows.length;
  const said = `<p class="count">${n(cut.total)} ${esc(cut.what)}${folded.length > 0 || missing > 0 ? `; the first ${n(open.length)} below` : ""}${folded.length > 0 ? `, the next ${n(folded.length)} folded under them` : ""}${missing > 0 ? `; the other ${n(missing)} are not in this page: ${cut.rest}` : ""}.</p>`;
  const more =
    folded.length > 0
      ? `<details class="more"><summary>Show the next ${n(folded.length)} ${esc(cut.what)}</summary>${table(head, folded, empty)}</details>`
      : "";
  return `${said}\n${table(head, open, empty)}${more}`;
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? n.toLocaleString("en") : n.toLocaleString("en", { maximumFractionDigits: 2 });
}

/**
 * Text that may wrap only at its spaces: a narrow column (a printed page) broke "2026-11-23" at
 * its hyphens into three lines.
 */
export function unbroken(text: string): Cell {
  return {
    html: text
      .split(" ")
      .map((w) => `<span class="nw">${esc(w)}</span>`)
      .join(" "),
  };
}

/** 2026-01-10 14:05Z, or a dash. */
export function shortTime(iso: string | null): string {
  return iso === null ? "-" : `${iso.slice(0, 16).replace("T", " ")}Z`;
}

export function lag(ms: number | null): string {
  return humanDuration(ms === null ? null : Math.round(ms / 1000));
}

export function percent(share: number): string {
  return share === 0 ? "0" : share === 1 ? "100" : (100 * share).toFixed(1);
}

export function projectName(pcode: number | null): string {
  return pcode === null || pcode === 0 ? "account" : String(pcode);
}

/** 2026-01-10 14:00Z .. 14:05Z (the end's date only when it differs). */
export function windowText(start: string, end: string): string {
  const [s, e] = [shortTime(start), shortTime(end)];
  return `${s} .. ${s.slice(0, 10) === e.slice(0, 10) ? e.slice(11) : e}`;
}
