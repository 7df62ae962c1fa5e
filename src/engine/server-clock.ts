// The planner's clock: our now, or the server's where it lags ours (the server answers nothing
// beyond its own clock). The planner itself is pure (src/windows); the engine passes it this now.
import type { EngineDeps, RunMode } from "./types.ts";

/** Our clock and the server's may differ this much without it mattering (Date header: 1 s resolution). */
export const CLOCK_TOLERANCE_MS = 2_000;

/**
 * Before the project streams plan their windows: learn the server's clock (a probe when no answer
 * told it yet) and say once when it lags ours, since planning then stops at the server's now.
 */
export async function noteServerClock(deps: EngineDeps, mode: RunMode): Promise<void> {
  const offset = await deps.client.probeClock(deps.stopping);
  if (offset === null || offset > -CLOCK_TOLERANCE_MS) return;
  const what = mode.kind === "sync" ? "this run syncs up to the server's now - settle" : "the backfill stops at the server's now - settle";
  deps.logger.warn(
    `the server's clock is ${formatOffset(-offset)} behind ours: ${what}; the rest is fetched once the server's clock has passed it`,
  );
}

/**
 * Says once per run how many windows were answered for less than was asked (each target named
 * its first one, with the echoed range). The server's clock is named only when it lags ours:
 * an answer can be short for other reasons (a stale replica), and a clock 0 s behind explains nothing.
 */
export function noteDeferred(deps: EngineDeps, totals: ReadonlyMap<string, { deferred: number }>): void {
  const deferred = [...totals.values()].reduce((n, c) => n + c.deferred, 0);
  if (deferred === 0) return;
  const offset = deps.client.serverClockOffsetMs();
  const clock = offset !== null && offset <= -CLOCK_TOLERANCE_MS ? ` (the server's clock is ${formatOffset(-offset)} behind ours)` : "";
  deps.logger.warn(
    `${deferred} window(s) were answered for less than was asked${clock}: what the answers covered is recorded, the rest is fetched by the next run`,
  );
}

/** The server's now as measured from its answers; null while no answer told it. */
export function serverNow(deps: EngineDeps): number | null {
  const offset = deps.client.serverClockOffsetMs();
  return offset === null ? null : deps.now() + offset;
}

/** Our clock, or the server's where it lags ours: the server answers nothing beyond its own clock. */
export function plannerNow(deps: EngineDeps): number {
  const now = deps.now();
  const offset = deps.client.serverClockOffsetMs();
  return offset !== null && offset < -CLOCK_TOLERANCE_MS ? now + offset : now;
}

export function formatOffset(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}
