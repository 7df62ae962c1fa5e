// v2 aggregated statistics, one row set per fetch window: each table's columns declared once
// (declare.ts), from which the record schemas (src/schemas/stats.ts), the tables
// (src/db/schema/stats.ts) and these dictionary entries come. Spec "Aggregated statistics records":
// the records are described (per service, per SQL statement...) but their fields are listed by name
// only, so field meanings are NAME_ONLY and no unit is documented. No samples exist; numbers may
// arrive as strings, so every measure goes through `num`. Hash keys and the count are required;
// counts (`count`, `error`) are never negative (recordCount: such a record is quarantined).
import { text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, docsOf, epoch, hash, integerOf, jsonList, measure, named, of, says, tally, text } from "../../kernel/declare.ts";
import type { DocGroup, TableDoc } from "../../kernel/docs.ts";
import { num, oidList } from "../../kernel/primitives.ts";
import { opt } from "../../kernel/record.ts";
import { f64, i64 } from "../../kernel/sql-types.ts";

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
  errorSnapId: of(
    opt(z.union([z.string(), z.number(), z.bigint()]).transform(String)),
    textColumn,
    named("Identifier of an error snapshot.", { conversion: "kept as text" }),
  ),
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

const tables: Record<string, TableDoc> = {
  stat_transaction: {
    description: `Transaction (service) statistics of each fetch window, grouped by service URL pattern. ${CAPPED}`,
    columns: docsOf(statTransactionColumns),
  },
  stat_sql: {
    description: `SQL statistics of each fetch window, grouped by SQL statement and database connection. ${CAPPED}`,
    columns: docsOf(statSqlColumns),
  },
  stat_httpc: {
    description: `Outbound HTTP call statistics of each fetch window, grouped by URL and host. ${CAPPED}`,
    columns: docsOf(statHttpcColumns),
  },
  stat_error: {
    description: `Exception statistics of each fetch window, grouped by exception class and message. ${CAPPED}`,
    columns: docsOf(statErrorColumns),
  },
  stat_remote: {
    description: `Client IP statistics with geographic data of each fetch window. ${CAPPED}`,
    columns: docsOf(statRemoteColumns),
  },
};

export const statDocs: DocGroup = { title: "Aggregated statistics (v2)", tables };
