// The heat map on a phone. The wide one (stream names left of 980 px of cells) shrank to a third
// at 390 px: its labels were ~3 px tall. Here each stream is a strip of the screen's width with its
// name above it, full size; the page shows this one below 640 px (style.ts).
import type { TopLevelSpec } from "vega-lite";
import { NARROW_WIDTH, STATE_COLOURS, timeAxis } from "./charts.ts";
import type { CellState, CoverageCell } from "./model.ts";

export function coverageNarrowSpec(cells: readonly CoverageCell[], bucket: "hour" | "day"): TopLevelSpec {
  const streams = [...new Set(cells.map((c) => c.stream))].sort();
  const present = (Object.keys(STATE_COLOURS) as CellState[]).filter((s) => cells.some((c) => c.state === s));
  return {
    data: { values: cells.map((c) => ({ stream: c.stream, start: c.bucketStart, state: c.state })) },
    facet: {
      row: {
        field: "stream",
        type: "nominal",
        sort: streams,
        title: null,
        // The name above its strip, from the left edge: as long as the screen is wide.
        header: {
          labelAngle: 0,
          labelOrient: "top",
          labelAnchor: "start",
          labelAlign: "left",
          labelFontSize: 11,
          labelPadding: 0,
          labelBaseline: "bottom",
        },
      },
    },
    // A name sits right on its strip, well apart from the strip above (at 4 px it read as that one's).
    spacing: { row: 14 },
    spec: {
      width: NARROW_WIDTH + 60,
      height: 12,
      mark: { type: "rect", stroke: "#fff", strokeWidth: 0.5 },
      encoding: {
        x: {
          field: "start",
          type: "temporal",
          timeUnit: bucket === "hour" ? "utcyearmonthdatehours" : "utcyearmonthdate",
          title: null,
          // Below the last strip: above the first, its labels ran into that strip's name.
          axis: { ...timeAxis(bucket), orient: "bottom", grid: false, tickCount: 4 },
        },
        color: {
          field: "state",
          type: "nominal",
          title: null,
          scale: { domain: present, range: present.map((s) => STATE_COLOURS[s]) },
          legend: { orient: "bottom", direction: "horizontal", symbolType: "square", columns: 3 },
        },
      },
    },
    resolve: { axis: { x: "shared" } },
  } as TopLevelSpec;
}
