// v1 range records and heap use, one row set per fetch window: each table's columns declared once
// (declare.ts), from which the record schemas (src/schemas/range.ts), the tables
// (src/db/schema/range.ts) and these dictionary entries come. Spec "Range records" and "Heap use
// result": the record fields are listed by name and type only, so most meanings are NAME_ONLY and
// no time unit is documented.
import { bigint, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { f64, i64, ts } from "../../kernel/sql-types.ts";
import { epochMs, long, num, oidList } from "../../kernel/primitives.ts";
import { opt } from "../../kernel/record.ts";
import { columns, docsOf, hash, integerOf, local, measure, named, of, says, tally, text } from "../../kernel/declare.ts";
import type { DocGroup, TableDoc } from "../../kernel/docs.ts";

const STRING_NUMBER = 'a string ("240.79"), stored as a number';
// Whether v1 records are capped is not documented; a total above the records returned is handled as a cut.
const CUT =
  "A window whose answer has a total above the records it holds is halved down to 5 minutes; a 5-minute window still " +
  "short is stored as it came and marked truncated in sync_windows.";

export const exceptionColumns = columns({
  time: of(
    epochMs,
    ts,
    says("Time of the record: in the docs' sample the start of a 5-minute bucket (the spec gives only its type, long).", {
      conversion: "read as epoch ms, stored as timestamptz (UTC)",
    }),
  ).key,
  classHash: hash("Hash of the exception class.").key,
  class: text(named("Exception class.")),
  serviceHash: hash("Hash of the service.").key,
  service: text(named("Service URL pattern the exceptions happened in.")),
  count: tally("Number of exceptions."),
  msg: text(named("Exception message.")),
  oids: of(
    opt(oidList),
    () => i64().array(),
    named("Agents the exceptions came from (agent ids).", {
      conversion: 'a string holding a list ("[-1459620666]"), stored as bigint[]',
    }),
  ),
  // Beyond 2^53 ("6068699991557528332"): read as bigint, never as a JS number.
  snapSeq: of(
    opt(long),
    () => bigint({ mode: "bigint" }),
    named("Snapshot sequence.", { conversion: "a string beyond 2^53, kept exact as bigint" }),
  ),
});

// PascalCase keys, unlike every other operation (Sum, Url, HostHash become snake_case columns).
export const httpcColumns = columns({
  UrlHash: hash("Hash of the URL.").key,
  Url: text(named("URL of the outbound call.")),
  HostHash: hash("Hash of the host.").key,
  Host: text(named("Host called.")),
  Port: integerOf(named("Port called.")).key,
  Total: tally("Number of calls."),
  Error: tally("Number of calls that failed.").optional,
  Actived: tally("Calls active (absent in the filtered form).").optional,
  Sum: measure("Sum of the call times."),
  Avg: measure("Average call time."),
  Min: measure("Shortest call time."),
  Max: measure("Longest call time."),
  Stdev: measure("Standard deviation of the call times.", STRING_NUMBER),
});

/** Filtered by host and port: one stream partition per filter, kept apart by the filter columns. */
export const httpcFilteredColumns = columns({
  filter_host: local(() => textColumn().notNull().default(""), {
    text: "The host filter the window was asked with (path parameter host).",
    conversion: "the request's input",
  }),
  filter_port: local(() => textColumn().notNull().default(""), {
    text: "The port filter the window was asked with (path parameter port).",
    conversion: "the request's input",
  }),
  ...httpcColumns,
  // The mixed-case `Service_hash`.
  Service_hash: hash("Hash of the service.").key,
  Service: text(named("Service URL pattern that made the calls.")),
});

export const sqlColumns = columns({
  hash: hash("Hash of the SQL statement.").key,
  dbcHash: hash("Hash of the database connection.").key,
  db: text(named("Database connection.")),
  sql: text(named("SQL statement (literals masked with # in the docs' sample).")),
  sql_crud: integerOf(named("Kind of statement (0 to 4 in the docs; the values' meanings are not documented).")),
  count_total: tally("Number of executions."),
  count_error: tally("Number of executions that failed.").optional,
  count_actived: tally("Executions active.").optional,
  time_sum: measure("Sum of the execution times."),
  time_avg: measure("Average execution time."),
  time_min: measure("Shortest execution time."),
  time_max: measure("Longest execution time."),
  time_std: measure("Standard deviation of the execution times.", STRING_NUMBER),
  fetch_count: measure("Rows fetched."),
  fetch_time: measure("Time spent fetching."),
});

export const remoteColumns = columns({
  ip: of(z.string(), textColumn, named("Client IP address.")).key,
  country: text(named('Country of the IP ("CC (NAME)" in the docs\' sample).')),
  city: text(named("City of the IP.")),
  count: tally("Number of requests from the IP."),
});

export const transactionColumns = columns({
  hash: hash("Hash of the service.").key,
  service: text(named("Service URL pattern.")),
  count: tally("Number of transactions."),
  error: tally("Number of transactions that failed.").optional,
  time_sum: measure("Sum of the response times."),
  time_avg: measure("Average response time."),
  time_max: measure("Longest response time."),
  sql_count: measure("SQL statements executed."),
  sql_time: measure("Time spent in SQL."),
  sql_fetch: measure("Rows fetched by SQL."),
  sql_fetch_time: measure("Time spent fetching SQL rows."),
  httpc_count: measure("Outbound HTTP calls."),
  httpc_avg: measure("Average outbound HTTP call time."),
  cpu_avg: measure("Average CPU use."),
  mem_avg: measure("Average memory use."),
  // Absent in the old docs' sample.
  apdex: of(opt(num), f64, named("Apdex score.", { unit: "Apdex score (0 to 1 by the Apdex definition)" })),
  apdex_satisfied: measure("Transactions in the Apdex satisfied zone."),
  apdex_tolerated: measure("Transactions in the Apdex tolerating zone."),
});

/** Heap use per agent: avg and max share the table, told apart by time_merge (a catalogue constant). */
export const heapUseColumns = columns({
  time_merge: local(() => textColumn().notNull(), {
    text: "avg or max: the form the operation asked for (its path suffix), not the echoed timeMerge (the docs show avg under /max).",
    conversion: "the catalogue entry's constant",
  }).key,
  oid: hash("Agent identifier.").key,
  oname: text("Agent name."),
  heap_use: of(
    num,
    f64,
    says("Heap use of the agent over the window (average or maximum per time_merge).", {
      unit: "the row's unit column (e.g. bytes)",
      conversion: 'a string holding a decimal ("36121554.72"), stored as a number',
    }),
  ),
  unit: local(textColumn, {
    field: "unit",
    text: "Unit of heap_use as the response states it (for example bytes).",
    conversion: "from the response envelope",
  }),
});

const tables: Record<string, TableDoc> = {
  range_exceptions: {
    description: `Exception records of each fetch window (v1 range operation). ${CUT}`,
    columns: docsOf(exceptionColumns),
  },
  range_httpc: {
    description: `Outbound HTTP call records of each fetch window, per URL, host and port (v1 range operation). ${CUT}`,
    columns: docsOf(httpcColumns),
  },
  range_httpc_by_service: {
    description:
      "Outbound HTTP call records of one host and port per service (v1, filtered form); one stream partition per " +
      `configured host/port filter. ${CUT}`,
    columns: docsOf(httpcFilteredColumns),
  },
  range_sql: {
    description: `SQL records of each fetch window, per statement and database connection (v1 range operation). ${CUT}`,
    columns: docsOf(sqlColumns),
  },
  range_remote: {
    description: `Remote client IP records of each fetch window (v1 range operation). ${CUT}`,
    columns: docsOf(remoteColumns),
  },
  range_transactions: {
    description: `Transaction records of each fetch window, per service (v1 range operation). ${CUT}`,
    columns: docsOf(transactionColumns),
  },
  heap_use: {
    description: "Heap use per agent and fetch window (at most one hour): averages and maxima share the table, told apart by time_merge.",
    columns: docsOf(heapUseColumns),
  },
};

export const rangeDocs: DocGroup = { title: "Range records (v1) and heap use", tables };
