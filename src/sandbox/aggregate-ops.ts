// The aggregate operations the sandbox serves (stat.*, range.* records): how a record groups the
// facts of a cube, how it prints, its default order, its natural key (within one response the
// records are unique by these fields: the warehouse relies on them) and its call-count field (what
// ground-truth sums use). A new aggregate stream of the sandbox is one entry here and its printer.
import type { StatType } from "../catalogue/stats.ts";
import { STAT_DEFAULT_ORDER } from "../catalogue/stats.ts";
import type { Fact } from "./generate/facts.ts";
import {
  exceptionRecord,
  httpcByServiceRecord,
  httpcRecord,
  remoteRecord,
  sqlRecord,
  transactionRecord,
} from "./payloads/range-records.ts";
import { type JsonRecord, STAT_PRINTERS } from "./payloads/stat-records.ts";
import type { ProjectWorld } from "./world.ts";

export interface AggregateOp {
  readonly type: StatType;
  /** Group key in index space; range.exception keeps one group per cube. */
  readonly group: (f: Fact, cube: number) => string;
  readonly print: (w: ProjectWorld, f: Fact) => JsonRecord;
  /** Default sort column (descending). */
  readonly order: string;
  /** The fields a record is unique by within one response. */
  readonly key: readonly string[];
  /** The field that counts calls (or hits). */
  readonly count: string;
}

const statOp = (type: StatType, group: (f: Fact) => string, key: readonly string[]): AggregateOp => ({
  type,
  group,
  print: STAT_PRINTERS[type],
  order: STAT_DEFAULT_ORDER[type],
  key,
  count: "count",
});

export const AGGREGATE_OPS: Readonly<Record<string, AggregateOp>> = {
  "stat.transaction": statOp("transaction", (f) => `${f.svc}`, ["serviceHash"]),
  "stat.sql": statOp("sql", (f) => `${f.sql}|${f.dbc}|${f.svc}`, ["sqlHash", "dbcHash", "serviceHash"]),
  "stat.httpc": statOp("httpc", (f) => `${f.url}|${f.host}|${f.svc}`, ["urlHash", "hostHash", "port", "serviceHash"]),
  "stat.error": statOp("error", (f) => `${f.cls}|${f.msg}|${f.svc}`, ["classHash", "msgHash", "serviceHash"]),
  "stat.remote": statOp("remote", (f) => `${f.ip}`, ["ip"]),
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
