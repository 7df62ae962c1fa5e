// Exception facts per cube: one per (class, message, service), with the agents that raised it.
import { BURST_BASE, BURST_EXCEPTION } from "../names.ts";
import { type Rng, rngOf } from "../rng.ts";
import { activity, agentActive, isBurstCube, type ProjectWorld, popularity } from "../world.ts";
import { callCount, type Fact } from "./measures.ts";

/** Bit set of one or two active agents (indices into world.agents). */
function raisedBy(rng: Rng, active: readonly number[]): number {
  if (active.length === 0) return 0;
  let bits = 1 << active[Math.floor(rng() * active.length)]!;
  if (rng() < 0.3) bits |= 1 << active[Math.floor(rng() * active.length)]!;
  return bits;
}

export function errorFacts(w: ProjectWorld, cube: number): Fact[] {
  const rng = rngOf(w.seed, w.pcode, cube, "error");
  const act = activity(w, cube);
  const active = w.agents.flatMap((a, i) => (agentActive(w, a, cube) ? [i] : []));
  const out: Fact[] = [];
  w.errorKeys.forEach((key, rank) => {
    const pop = popularity(rank);
    if (rng() >= act * pop) return;
    out.push({ cls: key.cls, msg: key.msg, svc: key.svc, count: callCount(rng, pop, act, 80), time: cube, agents: raisedBy(rng, active) });
  });
  if (isBurstCube(w, cube)) {
    for (let n = 0; n < w.burstKeys; n++) {
      out.push({ cls: BURST_EXCEPTION, msg: BURST_BASE + n, svc: BURST_BASE + n, count: 1, time: cube, agents: raisedBy(rng, active) });
    }
  }
  return out;
}
