// Outbound HTTP call facts per cube: one per (URL, host:port, service).
import { BURST_BASE, BURST_HOST } from "../names.ts";
import { mix, rngOf } from "../rng.ts";
import { activity, isBurstCube, type ProjectWorld, popularity } from "../world.ts";
import { callCount, errorsOf, type Fact, timing } from "./measures.ts";

export function httpcFacts(w: ProjectWorld, cube: number): Fact[] {
  const rng = rngOf(w.seed, w.pcode, cube, "httpc");
  const act = activity(w, cube);
  const out: Fact[] = [];
  w.httpcKeys.forEach((key, rank) => {
    const pop = popularity(rank);
    if (rng() >= act * pop * 1.3) return;
    const count = callCount(rng, pop, act, 400);
    const base = 50 + (mix(key.url, key.host, "httpc-latency") % 2000);
    out.push({
      url: key.url,
      host: key.host,
      svc: key.svc,
      count,
      error: errorsOf(rng, count, 0.1),
      ...timing(rng, count, base),
      actived: 0,
    });
  });
  if (isBurstCube(w, cube)) {
    // Burst: a cache warm-up calling one URL per item.
    for (let n = 0; n < w.burstKeys; n++) {
      out.push({ url: BURST_BASE + n, host: BURST_HOST, svc: BURST_BASE + n, count: 1, error: 0, ...timing(rng, 1, 5), actived: 0 });
    }
  }
  return out;
}
