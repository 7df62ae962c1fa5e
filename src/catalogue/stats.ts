// The v2 aggregated statistics family, in one place: one operation per type, capped at
// open_api_max_records (default 10,000). For each type: its columns (declared once:
// src/kernel/declare.ts), its table, its dictionary entry, the envelope and request, the operation
// and its measure. Spec "Aggregated statistics records": the records are described (per service,
// per SQL statement...) but their fields are listed by name only, so field meanings are NAME_ONLY
// and no unit is documented. No samples exist; numbers may arrive as strings, so every measure
// goes through `num`. Hash keys and the count are required; counts (`count`, `error`) are never
// negative (recordCount: such a record is quarantined).
import { getTableName } from "drizzle-orm";
import { text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, epoch, hash, integerOf, jsonList, measure, named, of, recordOf, says, tally, text } from "../kernel/declare.ts";
import type { DocGroup } from "../kernel/docs.ts";
import { count, idText, int, num, oidList } from "../kernel/primitives.ts";
import { opt } from "../kernel/record.ts";
import { f64, i64 } from "../kernel/sql-types.ts";
import { docEntry, windowedTable } from "../kernel/tables.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { DAY, defineOperation } from "./types.ts";

// ---- Columns ----

const CAPPED =
  "At most 10,000 records per request (open_api_max_records): a window cut by the cap is halved down to 5 minutes; a " +
  "5-minute window still cut is stored as it came and marked truncated in sync_windows. The server keeps a top-N per " +
  "hour, so windows longer than an hour are approximations (docs/api-notes.md).";

/** The service a record belongs to: optional, except in the transaction statistics it groups. */
const service = columns({ serviceHash: hash("Hash of the service.").optional.key, service: text(named("Service URL pattern.")) });

const timing = columns({
  count: tally("Number of executions."),
  error: tally("Number of executions that failed.").optional,
  timeSum: measure("Sum of the times."),
  timeAvg: measure("Average time."),
  timeMin: measure("Shortest time."),
  timeMax: measure("Longest time."),
  timeStdev: measure("Standard deviation of the times."),
});

export const statTransactionColumns = columns({
  ...service,
  serviceHash: hash("Hash of the service.").key,
  ...timing,
  count: tally("Number of transactions."),
  error: tally("Number of transactions that failed.").optional,
  timeSum: measure("Sum of the response times."),
  sqlCount: measure("SQL statements executed."),
  sqlCountAvg: measure("Average SQL statement count."),
  sqlTime: measure("Time spent in SQL."),
  sqlTimeAvg: measure("Average SQL time."),
  txSqlTimeAvg: measure("Average SQL time per transaction."),
  sqlFetch: measure("SQL fetches."),
  sqlFetchAvg: measure("Average SQL fetches."),
  sqlFetchTime: measure("Time spent in SQL fetches."),
  sqlFetchTimeAvg: measure("Average SQL fetch time."),
  txSqlFetchTimeAvg: measure("Average SQL fetch time per transaction."),
  httpcCount: measure("Outbound HTTP calls."),
  httpcCountAvg: measure("Average outbound HTTP call count."),
  httpcTime: measure("Time spent in outbound HTTP calls."),
  httpcTimeAvg: measure("Average outbound HTTP call time."),
  txHttpcTimeAvg: measure("Average outbound HTTP call time per transaction."),
  memAvg: measure("Average memory use."),
  cpuAvg: measure("Average CPU use."),
  apdexSatisfied: measure("Transactions in the Apdex satisfied zone."),
  apdexTolerated: measure("Transactions in the Apdex tolerating zone."),
  apdex: of(opt(num), f64, named("Apdex score.", { unit: "Apdex score (0 to 1 by the Apdex definition)" })),
});

export const statSqlColumns = columns({
  sqlHash: hash("Hash of the SQL statement.").key,
  sql: text(named("SQL statement.")),
  dbcHash: hash("Hash of the database connection.").key,
  db: text(named("Database connection.")),
  ...service,
  ...timing,
  fetchCount: measure("Rows fetched."),
  fetchCountAvg: measure("Average rows fetched."),
  fetchTime: measure("Time spent fetching."),
  fetchTimeAvg: measure("Average fetch time."),
  crudMetrics: text(named("CRUD metrics of the statement (a string; its format is not documented).")),
});

export const statHttpcColumns = columns({
  urlHash: hash("Hash of the URL.").key,
  url: text(named("URL called.")),
  hostHash: hash("Hash of the host.").key,
  host: text(named("Host called.")),
  port: integerOf(named("Port called.")).key,
  ...service,
  ...timing,
  count: tally("Number of calls."),
  error: tally("Number of calls that failed.").optional,
});

export const statErrorColumns = columns({
  classHash: hash("Hash of the exception class.").key,
  class: text(named("Exception class.")),
  msgHash: hash("Hash of the exception message.").key,
  msg: text(named("Exception message.")),
  ...service,
  errorSnapId: of(opt(idText), textColumn, named("Identifier of an error snapshot.", { conversion: "kept as text" })),
  count: tally("Number of exceptions."),
  time: epoch(`Time of the record ${"(not documented: read as epoch ms like the v1 exception records' time)"}.`),
  oids: of(opt(oidList), () => i64().array(), says("Agent identifiers (array of integer).", { conversion: "stored as bigint[]" })),
  onames: of(opt(z.array(z.string())), () => textColumn().array(), says("Agent names (array of string).")),
  okinds: jsonList(named("Per-kind agent groups.")),
  okindNames: jsonList(named("Names of the per-kind agent groups.")),
  onodes: jsonList(named("Per-server agent groups.")),
  onodeNames: jsonList(named("Names of the per-server agent groups.")),
});

export const statRemoteColumns = columns({
  ip: of(z.string(), textColumn, named("Client IP address.")).key,
  country: text(named("Country of the IP.")),
  city: text(named("City of the IP.")),
  count: tally("Number of requests from the IP."),
});

// ---- Tables: windowed aggregates, replaced per window on re-fetch; their rollups read their
// hours from the raw rows by time (readByTime) ----

export const statTransaction = windowedTable("stat_transaction", statTransactionColumns, { readByTime: true });
export const statSql = windowedTable("stat_sql", statSqlColumns, { readByTime: true });
export const statHttpc = windowedTable("stat_httpc", statHttpcColumns, { readByTime: true });
export const statError = windowedTable("stat_error", statErrorColumns, { readByTime: true });
export const statRemote = windowedTable("stat_remote", statRemoteColumns, { readByTime: true });

// ---- The dictionary's entries ----

export const statDocs: DocGroup = {
  title: "Aggregated statistics (v2)",
  tables: Object.fromEntries([
    docEntry(
      statTransaction,
      `Transaction (service) statistics of each fetch window, grouped by service URL pattern. ${CAPPED}`,
      statTransactionColumns,
    ),
    docEntry(statSql, `SQL statistics of each fetch window, grouped by SQL statement and database connection. ${CAPPED}`, statSqlColumns),
    docEntry(statHttpc, `Outbound HTTP call statistics of each fetch window, grouped by URL and host. ${CAPPED}`, statHttpcColumns),
    docEntry(statError, `Exception statistics of each fetch window, grouped by exception class and message. ${CAPPED}`, statErrorColumns),
    docEntry(statRemote, `Client IP statistics with geographic data of each fetch window. ${CAPPED}`, statRemoteColumns),
  ]),
};

// ---- Envelope and request (spec "Aggregated statistics records") ----

// `total` counts every matching record, `retrievedTotal` those returned (spec rule 3): a total
// below it is a lie about the answer, and the window is not recorded on its word.
const statsEnvelope = objectEnvelope(
  z
    .looseObject({ stime: opt(int), etime: opt(int), timestamp: opt(int), total: count, retrievedTotal: count, data: recordsArray })
    .superRefine((e, ctx) => {
      if (e.total < e.retrievedTotal)
        ctx.addIssue({
          code: "custom",
          path: ["total"],
          message: `${e.total} is below retrievedTotal ${e.retrievedTotal}`,
          input: e.total,
        });
    }),
);

const base = { stime: z.number().int().nonnegative(), etime: z.number().int().nonnegative(), order: z.string().optional() };

/** Request payload: stime, etime, order; `filter` (both host and port) only for httpc. */
function statRequest(type: "transaction" | "sql" | "httpc" | "error" | "remote") {
  const shape = type === "httpc" ? { ...base, filter: z.strictObject({ host: z.string(), port: z.string() }).optional() } : base;
  return z.strictObject(shape).refine((b) => b.etime - b.stime <= 86_400_000 && b.etime > b.stime, {
    message: "etime must be after stime and at most 24 hours later",
  });
}

// ---- Operations ----

export const STAT_TYPES = ["transaction", "sql", "httpc", "error", "remote"] as const;
export type StatType = (typeof STAT_TYPES)[number];

/** Default sort column per type when `order` is omitted (spec rule 1). */
export const STAT_DEFAULT_ORDER: Record<StatType, string> = {
  transaction: "timeSum",
  sql: "timeAvg",
  httpc: "timeSum",
  error: "count",
  remote: "count",
};

/** The columns and the table of each type. */
const STAT_TABLES = {
  transaction: [statTransactionColumns, statTransaction],
  sql: [statSqlColumns, statSql],
  httpc: [statHttpcColumns, statHttpc],
  error: [statErrorColumns, statError],
  remote: [statRemoteColumns, statRemote],
} as const;

export const statOperations = STAT_TYPES.map((type) =>
  defineOperation({
    id: `stat.${type}`,
    summary: `aggregated ${type} statistics`,
    area: "stats",
    // Method and path are published nowhere; default from docs/api-notes.md, overridable in config.
    method: "POST",
    path: `/open/api/v2/stat/${type}`,
    body: type === "httpc" ? ["stime", "etime", "order", "filter"] : ["stime", "etime", "order"],
    overridable: true,
    token: "project",
    sendsPcode: true,
    format: "json",
    windowLimitMs: DAY,
    inSpec: true,
    // The body says when the server produced it (spec: `timestamp`, epoch ms).
    clockField: "timestamp",
    envelope: statsEnvelope,
    records: { at: "data", schema: recordOf(STAT_TABLES[type][0]) },
    requestSchema: statRequest(type),
    stream: {
      kind: "aggregate",
      table: getTableName(STAT_TABLES[type][1]),
      enabledByDefault: true,
      truncation: "retrievedTotal",
      echoesWindow: true,
      measure: "count",
    },
  }),
);
