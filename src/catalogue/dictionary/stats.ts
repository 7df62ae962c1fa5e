// v2 aggregated statistics, one row set per fetch window. Spec "Aggregated statistics records": the
// records are described (per service, per SQL statement...) but their fields are listed by name
// only, so field meanings are NAME_ONLY and no unit is documented.
import { type ColumnDoc, type DocGroup, epoch, field, hash, JSON_KEPT, measure, named, type TableDoc, tally } from "./types.ts";

const CAPPED =
  "At most 10,000 records per request (open_api_max_records): a window cut by the cap is halved down to 5 minutes; a " +
  "5-minute window still cut is stored as it came and marked truncated in sync_windows. The server keeps a top-N per " +
  "hour, so windows longer than an hour are approximations (docs/api-notes.md).";

const service: Readonly<Record<string, ColumnDoc>> = {
  service_hash: hash("serviceHash", "Hash of the service."),
  service: named("service", "Service URL pattern."),
};

const timing: Readonly<Record<string, ColumnDoc>> = {
  count: tally("count", "Number of executions."),
  error: tally("error", "Number of executions that failed."),
  time_sum: measure("timeSum", "Sum of the times."),
  time_avg: measure("timeAvg", "Average time."),
  time_min: measure("timeMin", "Shortest time."),
  time_max: measure("timeMax", "Longest time."),
  time_stdev: measure("timeStdev", "Standard deviation of the times."),
};

const geo: Readonly<Record<string, ColumnDoc>> = {
  ip: named("ip", "Client IP address."),
  country: named("country", "Country of the IP."),
  city: named("city", "City of the IP."),
  count: tally("count", "Number of requests from the IP."),
};

const tables: Record<string, TableDoc> = {
  stat_transaction: {
    description: `Transaction (service) statistics of each fetch window, grouped by service URL pattern. ${CAPPED}`,
    columns: {
      ...service,
      ...timing,
      count: tally("count", "Number of transactions."),
      error: tally("error", "Number of transactions that failed."),
      time_sum: measure("timeSum", "Sum of the response times."),
      sql_count: measure("sqlCount", "SQL statements executed."),
      sql_count_avg: measure("sqlCountAvg", "Average SQL statement count."),
      sql_time: measure("sqlTime", "Time spent in SQL."),
      sql_time_avg: measure("sqlTimeAvg", "Average SQL time."),
      tx_sql_time_avg: measure("txSqlTimeAvg", "Average SQL time per transaction."),
      sql_fetch: measure("sqlFetch", "SQL fetches."),
      sql_fetch_avg: measure("sqlFetchAvg", "Average SQL fetches."),
      sql_fetch_time: measure("sqlFetchTime", "Time spent in SQL fetches."),
      sql_fetch_time_avg: measure("sqlFetchTimeAvg", "Average SQL fetch time."),
      tx_sql_fetch_time_avg: measure("txSqlFetchTimeAvg", "Average SQL fetch time per transaction."),
      httpc_count: measure("httpcCount", "Outbound HTTP calls."),
      httpc_count_avg: measure("httpcCountAvg", "Average outbound HTTP call count."),
      httpc_time: measure("httpcTime", "Time spent in outbound HTTP calls."),
      httpc_time_avg: measure("httpcTimeAvg", "Average outbound HTTP call time."),
      tx_httpc_time_avg: measure("txHttpcTimeAvg", "Average outbound HTTP call time per transaction."),
      mem_avg: measure("memAvg", "Average memory use."),
      cpu_avg: measure("cpuAvg", "Average CPU use."),
      apdex_satisfied: measure("apdexSatisfied", "Transactions in the Apdex satisfied zone."),
      apdex_tolerated: measure("apdexTolerated", "Transactions in the Apdex tolerating zone."),
      apdex: named("apdex", "Apdex score.", { unit: "Apdex score (0 to 1 by the Apdex definition)" }),
    },
  },
  stat_sql: {
    description: `SQL statistics of each fetch window, grouped by SQL statement and database connection. ${CAPPED}`,
    columns: {
      sql_hash: hash("sqlHash", "Hash of the SQL statement."),
      sql: named("sql", "SQL statement."),
      dbc_hash: hash("dbcHash", "Hash of the database connection."),
      db: named("db", "Database connection."),
      ...service,
      ...timing,
      fetch_count: measure("fetchCount", "Rows fetched."),
      fetch_count_avg: measure("fetchCountAvg", "Average rows fetched."),
      fetch_time: measure("fetchTime", "Time spent fetching."),
      fetch_time_avg: measure("fetchTimeAvg", "Average fetch time."),
      crud_metrics: named("crudMetrics", "CRUD metrics of the statement (a string; its format is not documented)."),
    },
  },
  stat_httpc: {
    description: `Outbound HTTP call statistics of each fetch window, grouped by URL and host. ${CAPPED}`,
    columns: {
      url_hash: hash("urlHash", "Hash of the URL."),
      url: named("url", "URL called."),
      host_hash: hash("hostHash", "Hash of the host."),
      host: named("host", "Host called."),
      port: named("port", "Port called."),
      ...service,
      ...timing,
      count: tally("count", "Number of calls."),
      error: tally("error", "Number of calls that failed."),
    },
  },
  stat_error: {
    description: `Exception statistics of each fetch window, grouped by exception class and message. ${CAPPED}`,
    columns: {
      class_hash: hash("classHash", "Hash of the exception class."),
      class: named("class", "Exception class."),
      msg_hash: hash("msgHash", "Hash of the exception message."),
      msg: named("msg", "Exception message."),
      ...service,
      error_snap_id: named("errorSnapId", "Identifier of an error snapshot.", { conversion: "kept as text" }),
      count: tally("count", "Number of exceptions."),
      time: epoch("time", `Time of the record ${"(not documented: read as epoch ms like the v1 exception records' time)"}.`),
      oids: field("oids", "Agent identifiers (array of integer).", { conversion: "stored as bigint[]" }),
      onames: field("onames", "Agent names (array of string)."),
      okinds: named("okinds", "Per-kind agent groups.", { conversion: JSON_KEPT }),
      okind_names: named("okindNames", "Names of the per-kind agent groups.", { conversion: JSON_KEPT }),
      onodes: named("onodes", "Per-server agent groups.", { conversion: JSON_KEPT }),
      onode_names: named("onodeNames", "Names of the per-server agent groups.", { conversion: JSON_KEPT }),
    },
  },
  stat_remote: { description: `Client IP statistics with geographic data of each fetch window. ${CAPPED}`, columns: geo },
};

export const statDocs: DocGroup = { title: "Aggregated statistics (v2)", tables };
