// The page's CSS: laid out for 1280 px, one column of charts below 1000 px, the phone drawing of
// each chart below 640 px, tables that print whole (no fixed-height box), system fonts, no
// external resource.
export const STYLE = `
:root { color-scheme: light; --ink: #1d1d1f; --muted: #666; --line: #e3e3e3; --bad: #c62828; --warn: #b26a00; --ok: #2e7d32; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: #fafafa; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 16px 0 6px; }
p { margin: 4px 0 10px; }
.meta, .hint, .empty { color: var(--muted); }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin: 16px 0 0; }
.tile { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.tile .value { font-size: 20px; font-weight: 600; }
.tile .label { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.tile.bad .value { color: var(--bad); } .tile.warn .value { color: var(--warn); } .tile.ok .value { color: var(--ok); }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px; overflow-x: auto; }
.chart svg { display: block; max-width: 100%; height: auto; }
.chart .narrow { display: none; }
@media (max-width: 640px) { .chart .wide { display: none; } .chart .narrow { display: block; } main { padding: 16px 10px 32px; } .chart { padding: 6px; } }
details.group { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; }
details.group > summary { padding: 6px 10px; cursor: pointer; }
details.group .table-wrap { border-top: 1px solid var(--line); }
details.more > summary { margin: 6px 0; cursor: pointer; color: var(--muted); }
.count { font-weight: 600; }
ul.why { margin: 6px 0; padding-left: 20px; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
@media (max-width: 1000px) { .grid { grid-template-columns: 1fr; } }
.grid h3 { margin-top: 0; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #f2f2f2; font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.status-failed, .status-partial, .status-interrupted { color: var(--bad); font-weight: 600; }
.status-ok { color: var(--ok); }
.table-wrap { overflow-x: auto; }
.nw { white-space: nowrap; }
/* On screen a row is one line; below 1000 px a wide table scrolls sideways. Printed, cells wrap at spaces. */
@media screen { td { white-space: nowrap; } td.wrap { white-space: normal; min-width: 14em; } }
@media screen and (max-width: 1000px) { table { font-size: 12px; } }
@media print {
  body { background: #fff; font-size: 12px; }
  main { max-width: none; padding: 0; }
  table { font-size: 10px; }
  th, td { padding: 2px 4px; }
  .tiles { grid-template-columns: repeat(7, 1fr); gap: 6px; }
  .tile { padding: 6px 8px; }
  .tile .value { font-size: 15px; }
  .tile .label { font-size: 10px; }
  th { position: static; }
  thead { display: table-header-group; }
  tr, .chart, .tile { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  .table-wrap { overflow: visible; }
}
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
`;
