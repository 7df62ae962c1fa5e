import type { Dispatcher } from "undici";
import { discard } from "./body.ts";

// The server's clock, measured from its answers. The server clamps etime to its own clock (spec,
// statistics rule 2) and serves only complete cubes: a server whose clock lags ours would answer
// every recent window short. Incremental runs plan up to min(our now, the server's now) - settle.

/** Largest plausible offset; anything beyond is a broken header, not a clock. */
const MAX_OFFSET_MS = 366 * 24 * 3_600_000;
const DATE_SAMPLES = 16;

export class ServerClock {
  /** Offsets from the HTTP Date header (1 s resolution: the midpoint of the second is used). */
  readonly #dateSamples: number[] = [];
  /** Offset from the latest `timestamp` field of a response body (ms resolution). */
  #precise: number | null = null;

  /** Our clock (the entry point's). */
  constructor(readonly localNow: () => number) {}

  /** Records an HTTP `Date` header received now. */
  observeDate(header: string | undefined): void {
    if (!header) return;
    const at = Date.parse(header);
    if (!Number.isFinite(at)) return;
    const offset = at + 500 - this.localNow();
    if (Math.abs(offset) > MAX_OFFSET_MS) return;
    this.#dateSamples.push(offset);
    if (this.#dateSamples.length > DATE_SAMPLES) this.#dateSamples.shift();
  }

  /** Records the `timestamp` (ms, time the server produced the response) of a body received now. */
  observeTimestamp(ms: unknown): void {
    const at = typeof ms === "bigint" ? Number(ms) : ms;
    if (typeof at !== "number" || !Number.isFinite(at)) return;
    const offset = at - this.localNow();
    if (Math.abs(offset) <= MAX_OFFSET_MS) this.#precise = offset;
  }

  /** Server clock minus ours, ms; null until an answer carried a clock. */
  offsetMs(): number | null {
    if (this.#precise !== null) return Math.round(this.#precise);
    if (this.#dateSamples.length === 0) return null;
    const sorted = [...this.#dateSamples].sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)]!);
  }
}

/** The body's clock field (statistics: `timestamp`), when the response has an envelope that carries one. */
export function bodyTimestamp(body: unknown, field: string): unknown {
  return typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[field] : undefined;
}

/**
 * GET of the base URL without credentials: any answer (even a 404) carries the server's Date. Only
 * the headers are read (a body that trickles for ever is cut, not drained); `signal` is the
 * deadline of the whole exchange (undici's own timeouts are per read).
 */
export async function probeServerClock(dispatcher: Dispatcher, base: URL, signal: AbortSignal, clock: ServerClock): Promise<void> {
  const res = await dispatcher.request({ origin: base.origin, method: "GET", path: base.pathname || "/", signal });
  const date = res.headers.date;
  clock.observeDate(Array.isArray(date) ? date[0] : date);
  discard(res.body);
}
