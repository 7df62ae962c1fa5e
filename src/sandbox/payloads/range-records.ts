// v1 range records: key names, casing and order from the docs samples, test/fixtures/api-samples (PascalCase httpc keys
// plus `Service_hash`, snake_case sql/transaction keys, Stdev/time_std as strings).
import type { Fact } from "../generate/facts.ts";
import { mix } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";
import type { AggregateOp } from "./aggregate-op.ts";
import { classOf, dbcOf, hostOf, ipOf, msgOf, ratio, sqlOf, stdev, svcOf, urlOf } from "./names.ts";
import { agentsOf, type JsonRecord } from "./stat-records.ts";

const avg = (sum: number, count: number) => (count > 0 ? Math.round(sum / count) : 0);

function exceptionRecord(w: ProjectWorld, f: Fact): JsonRecord {
  const c = classOf(f.cls!);
  const s = svcOf(f.svc!);
  return {
    // A string holding a list (docs sample "[-1459620666]").
    oids: `[${agentsOf(w, f.agents!)
      .map((a) => a.oid)
      .join(",")}]`,
    time: f.time,
    classHash: c.hash,
    count: f.count,
    service: s.name,
    class: c.name,
    serviceHash: s.hash,
    snapSeq: String(BigInt(mix(w.seed, w.pcode, f.time!, f.cls!, f.svc!)) * 2147483648n + BigInt(mix(f.time!, f.cls!))),
    msg: msgOf(f.msg!).name,
  };
}

function httpcRecord(_w: ProjectWorld, f: Fact): JsonRecord {
  const u = urlOf(f.url!);
  const h = hostOf(f.host!);
  return {
    Sum: f.timeSum,
    Port: h.port,
    Url: u.name,
    Host: h.name,
    Max: f.timeMax,
    Stdev: stdev(f.timeSq!, f.timeSum!, f.count!).toFixed(2),
    Actived: f.actived,
    Avg: avg(f.timeSum!, f.count!),
    HostHash: h.hash,
    Min: f.timeMin,
    Error: f.error,
    Total: f.count,
    UrlHash: u.hash,
  };
}

/** Filtered by host and port: adds Service and Service_hash, drops Actived (docs sample). */
function httpcByServiceRecord(w: ProjectWorld, f: Fact): JsonRecord {
  const { Actived: _, ...rest } = httpcRecord(w, f);
  const s = svcOf(f.svc!);
  return { Service: s.name, ...rest, Service_hash: s.hash };
}

function sqlRecord(_w: ProjectWorld, f: Fact): JsonRecord {
  const q = sqlOf(f.sql!);
  const d = dbcOf(f.dbc!);
  return {
    time_max: f.timeMax,
    dbcHash: d.hash,
    db: d.name,
    time_min: f.timeMin,
    fetch_count: f.fetchCount,
    hash: q.hash,
    fetch_time: f.fetchTime,
    sql_crud: q.crud,
    count_total: f.count,
    count_error: f.error,
    sql: q.sql,
    time_sum: f.timeSum,
    time_avg: avg(f.timeSum!, f.count!),
    time_std: stdev(f.timeSq!, f.timeSum!, f.count!).toFixed(2),
    count_actived: f.actived,
  };
}

function remoteRecord(w: ProjectWorld, f: Fact): JsonRecord {
  const r = ipOf(w, f.ip!);
  return { count: f.count, city: r.city, country: r.country, ip: r.ip };
}

function transactionRecord(_w: ProjectWorld, f: Fact): JsonRecord {
  const s = svcOf(f.svc!);
  const c = f.count!;
  return {
    apdex_tolerated: f.apdexTolerated,
    apdex_satisfied: f.apdexSatisfied,
    apdex: c > 0 ? (f.apdexSatisfied! + f.apdexTolerated! / 2) / c : 0,
    time_max: f.timeMax,
    sql_fetch_time: f.sqlFetchTime,
    sql_time: f.sqlTime,
    count: c,
    error: f.error,
    sql_count: f.sqlCount,
    hash: s.hash,
    sql_fetch: f.sqlFetch,
    httpc_avg: avg(f.httpcTime!, f.httpcCount!),
    cpu_avg: avg(f.cpuSum!, c),
    time_sum: f.timeSum,
    time_avg: avg(f.timeSum!, c),
    httpc_count: f.httpcCount,
    service: s.name,
    mem_avg: avg(f.memSum!, c),
  };
}

export { ratio };

/** The v1 range records the sandbox serves (aggregate-ops.ts). */
export const RANGE_OPS: Readonly<Record<string, AggregateOp>> = {
  // v1 orders are undocumented: the busiest first.
  "range.exception": {
    type: "error",
    group: (f, cube) => `${cube}|${f.cls}|${f.svc}`,
    print: exceptionRecord,
    order: "count",
    key: ["time", "classHash", "serviceHash"],
    count: "count",
  },
  "range.httpc": {
    type: "httpc",
    group: (f) => `${f.url}|${f.host}`,
    print: httpcRecord,
    order: "Sum",
    key: ["UrlHash", "HostHash", "Port"],
    count: "Total",
  },
  "range.httpc.filtered": {
    type: "httpc",
    group: (f) => `${f.url}|${f.host}|${f.svc}`,
    print: httpcByServiceRecord,
    order: "Sum",
    key: ["UrlHash", "HostHash", "Port", "Service_hash"],
    count: "Total",
  },
  "range.sql": {
    type: "sql",
    group: (f) => `${f.sql}|${f.dbc}`,
    print: sqlRecord,
    order: "time_sum",
    key: ["hash", "dbcHash"],
    count: "count_total",
  },
  "range.remote": { type: "remote", group: (f) => `${f.ip}`, print: remoteRecord, order: "count", key: ["ip"], count: "count" },
  "range.transaction": {
    type: "transaction",
    group: (f) => `${f.svc}`,
    print: transactionRecord,
    order: "time_sum",
    key: ["hash"],
    count: "count",
  },
};
