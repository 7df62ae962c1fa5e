// v1 range records and heap use, one row set per fetch window. Spec "Range records" and "Heap use
// result": the record fields are listed by name and type only, so most meanings are NAME_ONLY and
// no time unit is documented.
import { type ColumnDoc, type DocGroup, field, hash, measure, named, type TableDoc, tally } from "./types.ts";

const STRING_NUMBER = 'a string ("240.79"), stored as a number';
// Whether v1 records are capped is not documented; a total above the records returned is handled as a cut.
const CUT =
  "A window whose answer has a total above the records it holds is halved down to 5 minutes; a 5-minute window still " +
  "short is stored as it came and marked truncated in sync_windows.";

// PascalCase keys (Sum, Url, HostHash) become snake_case columns.
const httpc: Readonly<Record<string, ColumnDoc>> = {
  url_hash: hash("UrlHash", "Hash of the URL."),
  url: named("Url", "URL of the outbound call."),
  host_hash: hash("HostHash", "Hash of the host."),
  host: named("Host", "Host called."),
  port: named("Port", "Port called."),
  total: tally("Total", "Number of calls."),
  error: tally("Error", "Number of calls that failed."),
  actived: tally("Actived", "Calls active (absent in the filtered form)."),
  sum: measure("Sum", "Sum of the call times."),
  avg: measure("Avg", "Average call time."),
  min: measure("Min", "Shortest call time."),
  max: measure("Max", "Longest call time."),
  stdev: measure("Stdev", "Standard deviation of the call times.", STRING_NUMBER),
};

const tables: Record<string, TableDoc> = {
  range_exceptions: {
    description: `Exception records of each fetch window (v1 range operation). ${CUT}`,
    columns: {
      time: field("time", "Time of the record: in the docs' sample the start of a 5-minute bucket (the spec gives only its type, long).", {
        conversion: "read as epoch ms, stored as timestamptz (UTC)",
      }),
      class_hash: hash("classHash", "Hash of the exception class."),
      class: named("class", "Exception class."),
      service_hash: hash("serviceHash", "Hash of the service."),
      service: named("service", "Service URL pattern the exceptions happened in."),
      count: tally("count", "Number of exceptions."),
      msg: named("msg", "Exception message."),
      oids: named("oids", "Agents the exceptions came from (agent ids).", {
        conversion: 'a string holding a list ("[-1459620666]"), stored as bigint[]',
      }),
      snap_seq: named("snapSeq", "Snapshot sequence.", { conversion: "a string beyond 2^53, kept exact as bigint" }),
    },
  },
  range_httpc: {
    description: `Outbound HTTP call records of each fetch window, per URL, host and port (v1 range operation). ${CUT}`,
    columns: httpc,
  },
  range_httpc_by_service: {
    description:
      "Outbound HTTP call records of one host and port per service (v1, filtered form); one stream partition per " +
      `configured host/port filter. ${CUT}`,
    columns: {
      filter_host: { text: "The host filter the window was asked with (path parameter host).", conversion: "the request's input" },
      filter_port: { text: "The port filter the window was asked with (path parameter port).", conversion: "the request's input" },
      ...httpc,
      service_hash: hash("Service_hash", "Hash of the service."),
      service: named("Service", "Service URL pattern that made the calls."),
    },
  },
  range_sql: {
    description: `SQL records of each fetch window, per statement and database connection (v1 range operation). ${CUT}`,
    columns: {
      hash: hash("hash", "Hash of the SQL statement."),
      dbc_hash: hash("dbcHash", "Hash of the database connection."),
      db: named("db", "Database connection."),
      sql: named("sql", "SQL statement (literals masked with # in the docs' sample)."),
      sql_crud: named("sql_crud", "Kind of statement (0 to 4 in the docs; the values' meanings are not documented)."),
      count_total: tally("count_total", "Number of executions."),
      count_error: tally("count_error", "Number of executions that failed."),
      count_actived: tally("count_actived", "Executions active."),
      time_sum: measure("time_sum", "Sum of the execution times."),
      time_avg: measure("time_avg", "Average execution time."),
      time_min: measure("time_min", "Shortest execution time."),
      time_max: measure("time_max", "Longest execution time."),
      time_std: measure("time_std", "Standard deviation of the execution times.", STRING_NUMBER),
      fetch_count: measure("fetch_count", "Rows fetched."),
      fetch_time: measure("fetch_time", "Time spent fetching."),
    },
  },
  range_remote: {
    description: `Remote client IP records of each fetch window (v1 range operation). ${CUT}`,
    columns: {
      ip: named("ip", "Client IP address."),
      country: named("country", 'Country of the IP ("CC (NAME)" in the docs\' sample).'),
      city: named("city", "City of the IP."),
      count: tally("count", "Number of requests from the IP."),
    },
  },
  range_transactions: {
    description: `Transaction records of each fetch window, per service (v1 range operation). ${CUT}`,
    columns: {
      hash: hash("hash", "Hash of the service."),
      service: named("service", "Service URL pattern."),
      count: tally("count", "Number of transactions."),
      error: tally("error", "Number of transactions that failed."),
      time_sum: measure("time_sum", "Sum of the response times."),
      time_avg: measure("time_avg", "Average response time."),
      time_max: measure("time_max", "Longest response time."),
      sql_count: measure("sql_count", "SQL statements executed."),
      sql_time: measure("sql_time", "Time spent in SQL."),
      sql_fetch: measure("sql_fetch", "Rows fetched by SQL."),
      sql_fetch_time: measure("sql_fetch_time", "Time spent fetching SQL rows."),
      httpc_count: measure("httpc_count", "Outbound HTTP calls."),
      httpc_avg: measure("httpc_avg", "Average outbound HTTP call time."),
      cpu_avg: measure("cpu_avg", "Average CPU use."),
      mem_avg: measure("mem_avg", "Average memory use."),
      apdex: named("apdex", "Apdex score.", { unit: "Apdex score (0 to 1 by the Apdex definition)" }),
      apdex_satisfied: measure("apdex_satisfied", "Transactions in the Apdex satisfied zone."),
      apdex_tolerated: measure("apdex_tolerated", "Transactions in the Apdex tolerating zone."),
    },
  },
  heap_use: {
    description: "Heap use per agent and fetch window (at most one hour): averages and maxima share the table, told apart by time_merge.",
    columns: {
      time_merge: {
        text: "avg or max: the form the operation asked for (its path suffix), not the echoed timeMerge (the docs show avg under /max).",
        conversion: "the catalogue entry's constant",
      },
      oid: hash("oid", "Agent identifier."),
      oname: field("oname", "Agent name."),
      heap_use: field("heap_use", "Heap use of the agent over the window (average or maximum per time_merge).", {
        unit: "the row's unit column (e.g. bytes)",
        conversion: 'a string holding a decimal ("36121554.72"), stored as a number',
      }),
      unit: field("unit", "Unit of heap_use as the response states it (for example bytes).", { conversion: "from the response envelope" }),
    },
  },
};

export const rangeDocs: DocGroup = { title: "Range records (v1) and heap use", tables };
