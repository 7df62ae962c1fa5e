// Transaction (service) facts per cube: one per active service URL pattern.
import { BURST_BASE } from "../names.ts";
import { intIn, type Rng, rngOf } from "../rng.ts";
import { activity, isBurstCube, type ProjectWorld, popularity } from "../world.ts";
import { callCount, errorsOf, type Fact, timing } from "./measures.ts";

function txFact(rng: Rng, svc: number, count: number, base: number): Fact {
  const t = timing(rng, count, base);
  const sqlCount = count * intIn(rng, 0, 6);
  const sqlFetch = sqlCount * intIn(rng, 0, 20);
  const httpcCount = count * intIn(rng, 0, 3);
  // Apdex with T = 1 s: satisfied below T, tolerated below 4T.
  const satisfiedRate = base < 400 ? 0.85 + 0.15 * rng() : base < 1500 ? 0.4 + 0.4 * rng() : 0.1 * rng();
  const apdexSatisfied = Math.round(count * satisfiedRate);
  const apdexTolerated = Math.round((count - apdexSatisfied) * (0.3 + 0.6 * rng()));
  return {
    svc,
    count,
    error: errorsOf(rng, count, 0.15),
    ...t,
    sqlCount,
    sqlTime: Math.round(sqlCount * base * 0.1 * rng()),
    sqlFetch,
    sqlFetchTime: Math.round(sqlFetch * 0.05 * rng()),
    httpcCount,
    httpcTime: Math.round(httpcCount * (100 + 900 * rng())),
    memSum: count * intIn(rng, 16, 4096),
    cpuSum: count * intIn(rng, 0, 40),
    apdexSatisfied,
    apdexTolerated,
  };
}

export function transactionFacts(w: ProjectWorld, cube: number): Fact[] {
  const rng = rngOf(w.seed, w.pcode, cube, "transaction");
  const act = activity(w, cube);
  const out: Fact[] = [];
  w.services.forEach((svc, rank) => {
    const pop = popularity(rank);
    if (rng() >= act * pop * 1.6) return;
    out.push(txFact(rng, svc, callCount(rng, pop, act, 600), w.latency[rank]!));
  });
  // Burst: a crawler hitting thousands of distinct, un-normalised URLs in one cube.
  if (isBurstCube(w, cube)) for (let n = 0; n < w.burstKeys; n++) out.push(txFact(rng, BURST_BASE + n, intIn(rng, 1, 3), 120));
  return out;
}
