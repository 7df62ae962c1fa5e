// v2 aggregated statistics records, field names and order from the spec's "Aggregated statistics
// records" section. Averages are derived from the merged sums (sum / count).
import { STAT_DEFAULT_ORDER, type StatType } from "../../catalogue/stats.ts";
import type { Fact } from "../generate/facts.ts";
import { mix } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";
import type { AggregateOp } from "./aggregate-op.ts";
import { classOf, dbcOf, hostOf, ipOf, msgOf, ratio, round2, sqlOf, stdev, svcOf, urlOf } from "./names.ts";

export type JsonRecord = Record<string, unknown>;

function timeFields(f: Fact): JsonRecord {
  return {
    timeAvg: ratio(f.timeSum!, f.count!),
    timeSum: f.timeSum,
    timeMin: f.timeMin,
    timeMax: f.timeMax,
    timeStdev: stdev(f.timeSq!, f.timeSum!, f.count!),
  };
}

function transaction(_w: ProjectWorld, f: Fact): JsonRecord {
  const s = svcOf(f.svc!);
  const c = f.count!;
  return {
    serviceHash: s.hash,
    service: s.name,
    count: c,
    error: f.error,
    ...timeFields(f),
    sqlCount: f.sqlCount,
    sqlCountAvg: ratio(f.sqlCount!, c),
    sqlTime: f.sqlTime,
    sqlTimeAvg: ratio(f.sqlTime!, f.sqlCount!),
    txSqlTimeAvg: ratio(f.sqlTime!, c),
    sqlFetch: f.sqlFetch,
    sqlFetchAvg: ratio(f.sqlFetch!, c),
    sqlFetchTime: f.sqlFetchTime,
    sqlFetchTimeAvg: ratio(f.sqlFetchTime!, f.sqlFetch!),
    txSqlFetchTimeAvg: ratio(f.sqlFetchTime!, c),
    httpcCount: f.httpcCount,
    httpcCountAvg: ratio(f.httpcCount!, c),
    httpcTime: f.httpcTime,
    httpcTimeAvg: ratio(f.httpcTime!, f.httpcCount!),
    txHttpcTimeAvg: ratio(f.httpcTime!, c),
    memAvg: ratio(f.memSum!, c),
    cpuAvg: ratio(f.cpuSum!, c),
    apdexSatisfied: f.apdexSatisfied,
    apdexTolerated: f.apdexTolerated,
    apdex: c > 0 ? Math.round(((f.apdexSatisfied! + f.apdexTolerated! / 2) / c) * 10000) / 10000 : 0,
  };
}

function sql(_w: ProjectWorld, f: Fact): JsonRecord {
  const q = sqlOf(f.sql!);
  const d = dbcOf(f.dbc!);
  const s = svcOf(f.svc!);
  return {
    sqlHash: q.hash,
    sql: q.sql,
    dbcHash: d.hash,
    db: d.name,
    count: f.count,
    error: f.error,
    ...timeFields(f),
    fetchCount: f.fetchCount,
    fetchCountAvg: ratio(f.fetchCount!, f.count!),
    fetchTime: f.fetchTime,
    fetchTimeAvg: ratio(f.fetchTime!, f.fetchCount!),
    serviceHash: s.hash,
    service: s.name,
    crudMetrics: q.crudMetrics,
  };
}

function httpc(_w: ProjectWorld, f: Fact): JsonRecord {
  const u = urlOf(f.url!);
  const h = hostOf(f.host!);
  const s = svcOf(f.svc!);
  return {
    urlHash: u.hash,
    url: u.name,
    hostHash: h.hash,
    host: h.name,
    port: h.port,
    count: f.count,
    error: f.error,
    ...timeFields(f),
    serviceHash: s.hash,
    service: s.name,
  };
}

/** Agents of a bit set, in world order (oids, onames and the parallel okind/onode arrays). */
export function agentsOf(w: ProjectWorld, bits: number) {
  return w.agents.filter((_, i) => (bits >> i) & 1);
}

function error(w: ProjectWorld, f: Fact): JsonRecord {
  const c = classOf(f.cls!);
  const m = msgOf(f.msg!);
  const s = svcOf(f.svc!);
  const agents = agentsOf(w, f.agents!);
  return {
    classHash: c.hash,
    class: c.name,
    msgHash: m.hash,
    msg: m.name,
    // A snapshot id of the latest occurrence: a 63-bit number, so a string (beyond 2^53).
    errorSnapId: String(BigInt(mix(w.seed, w.pcode, f.time!, f.cls!, f.svc!)) * 2147483648n + BigInt(mix(f.msg!, f.time!))),
    count: f.count,
    time: f.time,
    serviceHash: s.hash,
    service: s.name,
    oids: agents.map((a) => a.oid),
    onames: agents.map((a) => a.oname),
    okinds: agents.map((a) => a.okind),
    okindNames: agents.map((a) => (a.okind ? "was" : "")),
    onodes: agents.map((a) => a.onode),
    onodeNames: agents.map(() => ""),
  };
}

function remote(w: ProjectWorld, f: Fact): JsonRecord {
  const r = ipOf(w, f.ip!);
  return { ip: r.ip, country: r.country, city: r.city, count: f.count };
}

const STAT_PRINTERS: Record<StatType, (w: ProjectWorld, f: Fact) => JsonRecord> = { transaction, sql, httpc, error, remote };

const statOp = (type: StatType, group: (f: Fact) => string, key: readonly string[]): AggregateOp => ({
  type,
  group,
  print: STAT_PRINTERS[type],
  order: STAT_DEFAULT_ORDER[type],
  key,
  count: "count",
});

/** The statistics the sandbox serves (aggregate-ops.ts). */
export const STAT_OPS: Readonly<Record<string, AggregateOp>> = {
  "stat.transaction": statOp("transaction", (f) => `${f.svc}`, ["serviceHash"]),
  "stat.sql": statOp("sql", (f) => `${f.sql}|${f.dbc}|${f.svc}`, ["sqlHash", "dbcHash", "serviceHash"]),
  "stat.httpc": statOp("httpc", (f) => `${f.url}|${f.host}|${f.svc}`, ["urlHash", "hostHash", "port", "serviceHash"]),
  "stat.error": statOp("error", (f) => `${f.cls}|${f.msg}|${f.svc}`, ["classHash", "msgHash", "serviceHash"]),
  "stat.remote": statOp("remote", (f) => `${f.ip}`, ["ip"]),
};
export { round2 };
