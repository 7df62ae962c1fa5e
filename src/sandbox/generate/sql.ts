// SQL facts per cube: one per (statement, database connection, service).
import { BURST_BASE } from "../names.ts";
import { intIn, mix, type Rng, rngOf } from "../rng.ts";
import { activity, isBurstCube, type ProjectWorld, popularity } from "../world.ts";
import { callCount, errorsOf, type Fact, timing } from "./measures.ts";

function sqlFact(rng: Rng, key: { sql: number; dbc: number; svc: number }, count: number, base: number): Fact {
  const fetchCount = count * intIn(rng, 0, 30);
  return {
    sql: key.sql,
    dbc: key.dbc,
    svc: key.svc,
    count,
    error: errorsOf(rng, count, 0.05),
    ...timing(rng, count, base),
    fetchCount,
    fetchTime: Math.round(fetchCount * 0.2 * rng()),
    actived: 0,
  };
}

export function sqlFacts(w: ProjectWorld, cube: number): Fact[] {
  const rng = rngOf(w.seed, w.pcode, cube, "sql");
  const act = activity(w, cube);
  const out: Fact[] = [];
  w.sqlKeys.forEach((key, rank) => {
    const pop = popularity(rank);
    if (rng() >= act * pop * 1.2) return;
    out.push(sqlFact(rng, key, callCount(rng, pop, act, 1500), 1 + (mix(key.sql, "sql-latency") % 400)));
  });
  if (isBurstCube(w, cube)) {
    // Burst: literal (unbound) SQL, a new statement text per call.
    const dbc = w.sqlKeys[0]?.dbc ?? 0;
    for (let n = 0; n < w.burstKeys; n++) out.push(sqlFact(rng, { sql: BURST_BASE + n, dbc, svc: BURST_BASE + n }, 1, 3));
  }
  return out;
}
