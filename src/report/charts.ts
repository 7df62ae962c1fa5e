// The report's charts as Vega-Lite specs built from the model (drawn by svg.ts).
import type { TopLevelSpec } from "vega-lite";
import type { CellState, CoverageCell, ReportModel } from "./model.ts";
import { axisTitle } from "./units.ts";

/** Plotting area of a full-width chart: the page is laid out for 1280 px, labels take ~220. */
const FULL_WIDTH = 980;
/** Plotting area of a chart in the two-column grid. */
const HALF_WIDTH = 440;

/** Plotting area of a chart on a phone (390 px wide, less the page's and the box's margins). */
export const NARROW_WIDTH = 250;

/** Colours of the heat map states: green is good, amber and red need a look, grey was never fetched, blue-grey was pruned. */
export const STATE_COLOURS: Readonly<Record<CellState, string>> = {
  done: "#2e7d32",
  // Dropped by the retention on purpose: a cool blue-grey, neither good green nor missing grey.
  pruned: "#90a4ae",
  "partly missing": "#a5d6a7",
  truncated: "#f9a825",
  failed: "#c62828",
  missing: "#d9d9d9",
};

/**
 * Project colours: none of the heat map's status colours (green, amber, red, grey), so a project's
 * line or bar never reads as a warning (tableau10's orange and red did, on a clean run).
 */
const PROJECT_COLOURS = ["#4e79a7", "#b07aa1", "#17a2b8", "#9c755f", "#2f4b7c", "#7f3c8d", "#6b6ecf", "#5f6b7a"];

const projectLabel = (pcode: number | null) => (pcode === null || pcode === 0 ? "account" : String(pcode));

/** One colour per project, the same in every chart (account-level streams carry no such data). */
function projectColour(model: ReportModel) {
  const domain = [...new Set(model.streams.filter((s) => s.pcode !== 0).map((s) => projectLabel(s.pcode)))].sort();
  return { field: "project", type: "nominal", title: "project", scale: { domain, range: PROJECT_COLOURS } } as const;
}

/**
 * Time labels short enough for a column, and thinned where they would still collide (7 daily
 * labels of "2026-11-16" ran together into one line at 7 days; 90 were a black bar).
 */
export function timeAxis(bucket: "hour" | "day") {
  const format = bucket === "hour" ? "%b %d %H:%M" : "%b %d";
  return { format, labelAngle: 0, labelOverlap: "greedy", labelSeparation: 6 } as const;
}

/** A UTC day (YYYY-MM-DD) as a band of its own, labelled like the time axes. */
const dayBand = { field: "day", type: "ordinal", timeUnit: "utcyearmonthdate", title: null } as const;

/** A tick per day while there is room for one; 90 of them were a comb (the labels keep their distance). */
function dayAxis(days: number) {
  return days <= 31 ? timeAxis("day") : { ...timeAxis("day"), ticks: false, labelPadding: 7 };
}

/** Streams down, buckets across, one colour per cell (its worst state); the legend names them. */
export function coverageSpec(cells: readonly CoverageCell[], bucket: "hour" | "day"): TopLevelSpec {
  const streams = [...new Set(cells.map((c) => c.stream))].sort();
  const present = (Object.keys(STATE_COLOURS) as CellState[]).filter((s) => cells.some((c) => c.state === s));
  return {
    width: FULL_WIDTH,
    height: { step: 13 },
    data: { values: cells.map((c) => ({ stream: c.stream, start: c.bucketStart, state: c.state })) },
    mark: { type: "rect", stroke: "#fff", strokeWidth: 0.5 },
    encoding: {
      x: {
        field: "start",
        type: "temporal",
        timeUnit: bucket === "hour" ? "utcyearmonthdatehours" : "utcyearmonthdate",
        title: null,
        axis: { ...timeAxis(bucket), orient: "top", grid: false },
      },
      y: { field: "stream", type: "nominal", sort: streams, title: null, axis: { labelLimit: 220 } },
      color: {
        field: "state",
        type: "nominal",
        title: null,
        // Only the states present: a complete run shows green alone, nothing amber or red.
        scale: { domain: present, range: present.map((s) => STATE_COLOURS[s]) },
        legend: { orient: "bottom", direction: "horizontal", symbolType: "square" },
      },
    },
  } as TopLevelSpec;
}

/** Bars of time_sum as stored: the API documents no unit for it, so none is assumed (units.ts). */
export function topServicesSpec(model: ReportModel, narrow = false): TopLevelSpec {
  const values = model.topServices.map((s) => ({
    label: `${s.service} (${projectLabel(s.pcode)})`,
    project: projectLabel(s.pcode),
    timeSum: s.timeSum,
  }));
  return {
    width: narrow ? NARROW_WIDTH - 150 : HALF_WIDTH - 200,
    height: { step: 18 },
    data: { values },
    mark: { type: "bar" },
    encoding: {
      y: { field: "label", type: "nominal", sort: "-x", title: null, axis: { labelLimit: narrow ? 150 : 300 } },
      x: {
        field: "timeSum",
        type: "quantitative",
        title: axisTitle("total time_sum", "stat_transaction", "time_sum"),
        axis: { format: "~s", tickCount: narrow ? 3 : undefined },
      },
      color: { ...projectColour(model), legend: null },
    },
  } as TopLevelSpec;
}

/** Straight lines between the points (a smoothed line overshot between hourly values). */
export function errorRateSpec(model: ReportModel, narrow = false): TopLevelSpec {
  const values = model.errorRate.filter((r) => r.errorRate !== null).map((r) => ({ ...r, project: projectLabel(r.pcode) }));
  return {
    width: narrow ? NARROW_WIDTH : HALF_WIDTH,
    height: 200,
    data: { values },
    mark: { type: "line", interpolate: "linear", strokeWidth: 1.5 },
    encoding: {
      x: { field: "bucketStart", type: "temporal", scale: { type: "utc" }, title: null, axis: timeAxis(model.range.bucket) },
      y: { field: "errorRate", type: "quantitative", title: "errors / transactions", axis: { format: ".1%" } },
      color: projectColour(model),
    },
  } as TopLevelSpec;
}

export function visitorsSpec(model: ReportModel, narrow = false): TopLevelSpec {
  return {
    width: narrow ? NARROW_WIDTH : HALF_WIDTH,
    height: 200,
    data: { values: model.visitorsPerDay.map((v) => ({ ...v, project: projectLabel(v.pcode) })) },
    mark: { type: "bar" },
    encoding: {
      x: { ...dayBand, axis: dayAxis(new Set(model.visitorsPerDay.map((v) => v.day)).size) },
      xOffset: { field: "project", type: "nominal" },
      y: { field: "visitors", type: "quantitative", title: axisTitle("visitors", "visitors", "count"), axis: { format: ",d" } },
      color: projectColour(model),
    },
  } as TopLevelSpec;
}

/** Tables down, days across, shade by rows (log: tables differ by orders of magnitude), counts printed. */
export function rowsSpec(model: ReportModel, narrow = false): TopLevelSpec {
  // A log scale has no place for 0; a day without rows is an empty cell.
  const values = model.rowsPerTable.filter((r) => r.rows > 0);
  const counts = values.map((r) => r.rows);
  const [min, max] = [Math.min(...counts), Math.max(...counts)];
  // White text on the darker part of the scale (above 60 % of its log range), dark text elsewhere.
  const darkFrom = Math.exp(Math.log(min) + 0.6 * (Math.log(max) - Math.log(min)));
  const days = new Set(values.map((r) => r.day)).size;
  const position = {
    x: { ...dayBand, axis: { ...dayAxis(days), orient: "top" } },
    y: { field: "table", type: "nominal", title: null },
  };
  const cells = {
    // Beyond a month a column is a few pixels wide: a white border would leave stripes, not cells.
    mark: { type: "rect", stroke: "#fff", strokeWidth: days > 31 ? 0 : 1 },
    encoding: { ...position, color: { field: "rows", type: "quantitative", scale: { type: "log", scheme: "blues" }, legend: null } },
  };
  const text = {
    mark: { type: "text", fontSize: 10 },
    encoding: {
      ...position,
      text: { field: "rows", type: "quantitative", format: ".3~s" },
      color: { condition: { test: `datum.rows >= ${darkFrom}`, value: "#fff" }, value: "#222" },
    },
  };
  // Printed counts only while a day's column is wide enough to hold one.
  return {
    width: narrow ? NARROW_WIDTH - 100 : HALF_WIDTH - 80,
    height: { step: 16 },
    data: { values },
    layer: days <= (narrow ? 3 : 8) ? [cells, text] : [cells],
  } as TopLevelSpec;
}
