// Opens a local page in the system's headless Chromium (the Debian package; playwright-core
// drives it and downloads nothing) and says what a reader would notice: console errors, requests
// leaving the file, and whether anything is drawn.
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

export interface PageLook {
  readonly consoleErrors: string[];
  /** Every request other than the page itself, and every failed one. */
  readonly requests: string[];
  /** Share of the screenshot's pixels that differ from its most common colour (the background). */
  readonly inkShare: number;
  /** Distinct colours of the screenshot (at 4 bits per channel). */
  readonly colours: number;
}

export async function openInChromium(file: string, screenshot: string, viewport = { width: 1280, height: 900 }): Promise<PageLook> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport });
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    const self = `file://${file}`;
    page.on("console", (m) => (m.type() === "error" ? consoleErrors.push(m.text()) : undefined));
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    page.on("request", (r) => (r.url() === self ? undefined : requests.push(r.url())));
    page.on("requestfailed", (r) => requests.push(`failed: ${r.url()}`));
    await page.goto(self, { waitUntil: "load" });
    const png = PNG.sync.read(await page.screenshot({ path: screenshot }));
    return { consoleErrors, requests, ...ink(png) };
  } finally {
    await browser.close();
  }
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
