// Calls under way, so that progress can name the slow ones (operation, window, seconds) instead
// of showing 0/0 while a run waits on one answer (a trickling body, a Retry-After).
import type { RequestParams } from "../catalogue/types.ts";

/** A call still under way: what it asks for and since when (performance.now()). */
export interface PendingCall {
  readonly what: string;
  readonly since: number;
}

export class PendingCalls {
  readonly #calls = new Set<PendingCall>();

  /** Runs `call`, listed under `what` until it settles. */
  async track<T>(what: string, call: () => Promise<T>): Promise<T> {
    const entry = { what, since: performance.now() };
    this.#calls.add(entry);
    try {
      return await call();
    } finally {
      this.#calls.delete(entry);
    }
  }

  list(): readonly PendingCall[] {
    return [...this.#calls];
  }
}

/** `stat.sql pcode=1001 2026-03-09T14:00Z..15:00Z`: operation, project and window (never a credential). */
export function describeCall(opId: string, pcode: number | undefined, params: RequestParams | undefined): string {
  const { stime, etime } = params ?? {};
  const window = typeof stime === "number" && typeof etime === "number" ? ` ${shortIso(stime)}..${shortIso(etime).slice(11)}` : "";
  return `${opId}${pcode ? ` pcode=${pcode}` : ""}${window}`;
}

function shortIso(ms: number): string {
  return new Date(ms).toISOString().replace(/:00\.000Z$/, "Z");
}
