// Opens a local page in the system's headless Chromium (the Debian package; playwright-core
// drives it and downloads nothing) and says what a reader would notice: console errors, requests
// leaving the file, whether anything is drawn, axis labels drawn over each other, warning colours,
// tables cut by a box or too wide for the page, smoothed lines.
import { chromium } from "playwright-core";
import { PNG } from "pngjs";

export const CHROMIUM = "/usr/bin/chromium";

// No sandbox (tests may run as root in a container), no GPU, and none of the background traffic
// (updates, sync, QUIC probes) a fresh profile starts, which would read as requests of the page.
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The heat map's colours of trouble (partly missing, truncated, failed, missing): src/report/charts.ts. */
export const WARNING_FILLS = ["#a5d6a7", "#f9a825", "#c62828", "#d9d9d9"];

export interface PageLook {
  readonly consoleErrors: string[];
  /** Every request other than the page itself, and every failed one. */
  readonly requests: string[];
  /** Share of the screenshot's pixels that differ from its most common colour (the background). */
  readonly inkShare: number;
  /** Distinct colours of the screenshot (at 4 bits per channel). */
  readonly colours: number;
  /** Pairs of visible axis labels of one chart whose boxes, as laid out by the browser, intersect. */
  readonly overlappingLabels: string[];
  /** Elements in a warning colour or tone: heat map cells and legend symbols, tiles, run states. */
  readonly warnings: string[];
  /** Tables inside a box that cuts them (fixed height) or wider than the page. */
  readonly cutTables: string[];
  /** Line marks drawn as curves (a smoothed line overshoots between its points). */
  readonly curvedLines: number;
  /**
   * Chart text drawn too small to read (under 8 px tall as laid out): a chart scaled down to a
   * narrow screen, e.g. the heat map's 11 px stream names at ~3 px on a phone. "text (height)".
   */
  readonly smallText: string[];
}

export interface OpenOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  /** `print`: the page as it prints (CSS print rules). */
  readonly media?: "screen" | "print";
  /** Whole page instead of the first screen. */
  readonly fullPage?: boolean;
}

export async function openInChromium(file: string, screenshot: string, opts: OpenOptions = {}): Promise<PageLook> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1280, height: 900 } });
    if (opts.media) await page.emulateMedia({ media: opts.media });
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    const self = `file://${file}`;
    page.on("console", (m) => (m.type() === "error" ? consoleErrors.push(m.text()) : undefined));
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    page.on("request", (r) => (r.url() === self ? undefined : requests.push(r.url())));
    page.on("requestfailed", (r) => requests.push(`failed: ${r.url()}`));
    await page.goto(self, { waitUntil: "load" });
    const layout = await page.evaluate(measureLayout, WARNING_FILLS);
    const png = PNG.sync.read(await page.screenshot({ path: screenshot, fullPage: opts.fullPage ?? false }));
    return { consoleErrors, requests, ...ink(png), ...layout };
  } finally {
    await browser.close();
  }
}

/** What measureLayout uses of the DOM (the test project is compiled without the DOM library). */
interface DomNode {
  readonly tagName: string;
  readonly className: string;
  readonly textContent: string | null;
  readonly parentElement: DomNode | null;
  readonly scrollHeight: number;
  readonly clientHeight: number;
  readonly scrollWidth: number;
  readonly clientWidth: number;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number };
  querySelector(selector: string): DomNode | null;
  querySelectorAll(selector: string): Iterable<DomNode>;
}

/** Runs in the page. */
function measureLayout(warningFills: readonly string[]) {
  const page = globalThis as unknown as { document: DomNode & { body: DomNode }; getComputedStyle(e: DomNode): { overflowY: string } };
  const document = page.document;
  const overlappingLabels: string[] = [];
  for (const svg of document.querySelectorAll("svg")) {
    const labels = [...svg.querySelectorAll("g.role-axis-label text")]
      .filter((t) => t.getAttribute("opacity") !== "0" && (t.textContent ?? "").trim() !== "")
      .map((t) => ({ text: t.textContent ?? "", box: t.getBoundingClientRect() }));
    labels.forEach((a, i) => {
      for (const b of labels.slice(i + 1)) {
        const [x, y] = [
          Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left),
          Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top),
        ];
        // Half a pixel of touching is not overlapping.
        if (x > 0.5 && y > 0.5) overlappingLabels.push(`${a.text} / ${b.text}`);
      }
    });
  }
  const warnings = [
    ...[...document.querySelectorAll("[fill]")]
      .filter((e) => warningFills.includes((e.getAttribute("fill") ?? "").toLowerCase()))
      .map((e) => `${e.tagName} fill ${e.getAttribute("fill")}`),
    ...[...document.querySelectorAll(".tile.warn, .tile.bad, .status-failed, .status-partial, .status-interrupted")].map(
      (e) => `${e.className}: ${e.textContent}`,
    ),
  ];
  const cutTables: string[] = [];
  for (const table of document.querySelectorAll("table")) {
    const name = table.querySelector("th")?.parentElement?.textContent ?? "table";
    for (let el = table.parentElement; el && el !== document.body; el = el.parentElement) {
      const style = page.getComputedStyle(el);
      if (style.overflowY !== "visible" && el.scrollHeight > el.clientHeight + 1) cutTables.push(`${name}: cut at ${el.clientHeight}px`);
      if (el.scrollWidth > el.clientWidth + 1) cutTables.push(`${name}: ${el.scrollWidth}px wide in ${el.clientWidth}px`);
    }
  }
  const curvedLines = [...document.querySelectorAll("g.mark-line path")].filter((p) =>
    /[CcSsQqTtAa]/.test(p.getAttribute("d") ?? ""),
  ).length;
  const smallText: string[] = [];
  for (const t of document.querySelectorAll("svg text")) {
    const box = t.getBoundingClientRect();
    // A title turned a quarter is as wide as its letters are tall.
    const turned = /rotate\(-?(90|270)/.test(t.getAttribute("transform") ?? "");
    const height = turned ? box.right - box.left : box.bottom - box.top;
    // A hidden drawing (the other of a chart's two) lays out at 0 x 0.
    if (box.bottom - box.top === 0 || (t.textContent ?? "").trim() === "" || t.getAttribute("opacity") === "0") continue;
    if (height < 8) smallText.push(`${t.textContent} (${height.toFixed(1)} px)`);
  }
  return { overlappingLabels, warnings, cutTables, curvedLines, smallText };
}

function ink(png: PNG): { inkShare: number; colours: number } {
  const counts = new Map<number, number>();
  for (let i = 0; i < png.data.length; i += 4) {
    const key = ((png.data[i]! >> 4) << 8) | ((png.data[i + 1]! >> 4) << 4) | (png.data[i + 2]! >> 4);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const pixels = png.data.length / 4;
  const background = Math.max(...counts.values());
  return { inkShare: (pixels - background) / pixels, colours: counts.size };
}
