// Remote client IP facts per cube.
import { BURST_BASE } from "../names.ts";
import { rngOf } from "../rng.ts";
import { activity, isBurstCube, type ProjectWorld, popularity } from "../world.ts";
import { callCount, type Fact } from "./measures.ts";

/** `ip` is an index into world.ips, or BURST_BASE + n for scanner n (names.burstIp). */
export function remoteFacts(w: ProjectWorld, cube: number): Fact[] {
  const rng = rngOf(w.seed, w.pcode, cube, "remote");
  const act = activity(w, cube);
  const out: Fact[] = [];
  w.ips.forEach((_, rank) => {
    const pop = popularity(rank);
    if (rng() >= act * pop * 1.1) return;
    out.push({ ip: rank, count: callCount(rng, pop, act, 500) });
  });
  // Burst: a scanner sweeping from thousands of addresses.
  if (isBurstCube(w, cube)) for (let n = 0; n < w.burstKeys; n++) out.push({ ip: BURST_BASE + n, count: 1 });
  return out;
}
