// Calendar months in UTC: the time partitions of the warehouse (docs/design.md "Time partitions"). A month is
// named by the epoch ms of its first instant.

/** Start (UTC) of the month holding `t`. */
export function monthStart(t: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The month holding `t` as its name, `YYYY-MM` (UTC): archive paths, prune's and restore's lines, status and report. */
export function monthName(t: number): string {
  return new Date(t).toISOString().slice(0, 7);
}

/** Start of the month `n` months after the month holding `t` (n may be negative). */
export function addMonths(t: number, n: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1);
}

/** The distinct months (their starts, ascending) holding `times`; values that are not times are skipped. */
export function monthsOf(times: Iterable<unknown>): number[] {
  const months = new Set<number>();
  // Rows mostly come in time order: most share the month of the row before.
  let from = Number.NaN;
  let to = Number.NaN;
  for (const v of times) {
    const t = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Number.NaN;
    if (!Number.isFinite(t) || (t >= from && t < to)) continue;
    from = monthStart(t);
    to = addMonths(from, 1);
    months.add(from);
  }
  return [...months].sort((a, b) => a - b);
}
