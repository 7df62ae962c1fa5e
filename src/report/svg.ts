// Vega-Lite spec -> SVG text, on the server: compiled to Vega and rendered headless (renderer
// 'none' needs no canvas and no DOM; text widths are estimated, fine for sans-serif labels).
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

const CONFIG = {
  // The system's sans-serif: no font is embedded or fetched.
  font: "sans-serif",
  background: "transparent",
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 11, titleFontWeight: "normal", titleColor: "#444", labelColor: "#333", gridColor: "#eee" },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: "top" },
  // Every mark would carry an aria-label naming all its fields (thousands of heat map cells);
  // the page's tables and --json carry the same figures.
  mark: { aria: false },
} as const;

/** Vega's text measuring hook; public at runtime (vl-convert sets it too) but not in its typings. */
interface TextMetrics {
  width: (item: { fontSize?: number; limit?: number }, text: unknown) => number;
}

// Without a canvas Vega estimates 0.8 em per character, more than system sans-serif takes: in the
// screenshots long stream names and URLs were cut ("series.thread_peak_count…") and axes left wide
// blank margins. At 0.62 em the labels of the Chromium screenshot (DejaVu Sans) fit, uncut.
const metrics = (vega as unknown as { textMetrics: TextMetrics }).textMetrics;
metrics.width = (item, text) => {
  const width = 0.62 * String(text ?? "").trim().length * (item.fontSize ?? 11);
  return item.limit && item.limit > 0 ? Math.min(width, item.limit) : width;
};

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const compiled = compile({ ...spec, config: { ...CONFIG, ...spec.config } } as TopLevelSpec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
