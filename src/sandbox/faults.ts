// Fault injection and the rate limit. Which request gets which fault is a pure function of
// (seed, request counter), so a sequential run is reproducible.

import { mix } from "./rng.ts";
import { FAULT_KINDS, type FaultKind } from "./types.ts";

const TWO32 = 4294967296;

export function decideFault(seed: number, n: number, rate: number, kinds: readonly FaultKind[]): FaultKind | null {
  if (rate <= 0 || kinds.length === 0) return null;
  if (mix(seed, n, "fault") / TWO32 >= rate) return null;
  return kinds[mix(seed, n, "fault-kind") % kinds.length]!;
}

export function latencyFor(seed: number, n: number, range: readonly [number, number] | undefined): number {
  if (!range) return 0;
  const [a, b] = range;
  return Math.round(a + (mix(seed, n, "latency") / TWO32) * Math.max(0, b - a));
}

/** Faults answered before the request is handled; the others alter a computed response. */
export const EARLY_FAULTS: ReadonlySet<FaultKind> = new Set(["429", "500", "502", "503", "reset", "stall", "html"]);

export function parseFaultKinds(text: string): FaultKind[] {
  const kinds = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = kinds.filter((k) => !FAULT_KINDS.includes(k as FaultKind));
  if (bad.length > 0) throw new Error(`unknown fault kind(s): ${bad.join(", ")} (known: ${FAULT_KINDS.join(", ")})`);
  return kinds as FaultKind[];
}

export const HTML_502 =
  "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n";

/** Token bucket on the wall clock (not the injected data clock): capacity max(1, rps). */
export class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #capacity: number;

  constructor(
    readonly rps: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.#capacity = Math.max(1, rps);
    this.#tokens = this.#capacity;
    this.#last = clock();
  }

  /** 0 when the request may pass, else the seconds to wait (Retry-After, at least 1). */
  take(): number {
    const t = this.clock();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((t - this.#last) / 1000) * this.rps);
    this.#last = t;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.rps));
  }
}
