// The range family, in one place: v1 range records and heap use (spec "Range records", "Heap use
// result", "Range operations": path parameters stime/etime). For each stream: its columns (the
// records' fields, their SQL types and meanings, declared once: src/kernel/declare.ts), its table,
// its dictionary entry, its envelope, its operation and its measure. The record fields are listed
// by name and type only, so most meanings are NAME_ONLY and no time unit is documented; counts
// (calls, errors, actives) are never negative (recordCount).
import { getTableName } from "drizzle-orm";
import { bigint, type PgTable, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, type Declaration, hash, integerOf, local, measure, named, of, recordOf, says, tally, text } from "../kernel/declare.ts";
import type { DocGroup } from "../kernel/docs.ts";
import { count, epochMs, int, long, num, oidList, pcode } from "../kernel/primitives.ts";
import { opt } from "../kernel/record.ts";
import { f64, i64, ts } from "../kernel/sql-types.ts";
import { docEntry, windowedTable } from "../kernel/tables.ts";
import { objectEnvelope, recordsArray } from "../schemas/envelope.ts";
import { DAY, defineOperation, HOUR } from "./types.ts";

// ---- Columns ----

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

// ---- Tables: windowed aggregates, replaced per window on re-fetch ----

export const rangeExceptions = windowedTable("range_exceptions", exceptionColumns);
export const rangeHttpc = windowedTable("range_httpc", httpcColumns);
/** One stream partition per (host, port) filter: replacing one filter's window leaves the others alone. */
export const rangeHttpcByService = windowedTable("range_httpc_by_service", httpcFilteredColumns);
export const rangeSql = windowedTable("range_sql", sqlColumns);
export const rangeRemote = windowedTable("range_remote", remoteColumns);
export const rangeTransactions = windowedTable("range_transactions", transactionColumns);
/** Heap use per agent: both streams (avg, max) share the table, told apart by time_merge. */
export const heapUseTable = windowedTable("heap_use", heapUseColumns);

// ---- The dictionary's entries ----

export const rangeDocs: DocGroup = {
  title: "Range records (v1) and heap use",
  tables: Object.fromEntries([
    docEntry(rangeExceptions, `Exception records of each fetch window (v1 range operation). ${CUT}`, exceptionColumns),
    docEntry(
      rangeHttpc,
      `Outbound HTTP call records of each fetch window, per URL, host and port (v1 range operation). ${CUT}`,
      httpcColumns,
    ),
    docEntry(
      rangeHttpcByService,
      "Outbound HTTP call records of one host and port per service (v1, filtered form); one stream partition per " +
        `configured host/port filter. ${CUT}`,
      httpcFilteredColumns,
    ),
    docEntry(rangeSql, `SQL records of each fetch window, per statement and database connection (v1 range operation). ${CUT}`, sqlColumns),
    docEntry(rangeRemote, `Remote client IP records of each fetch window (v1 range operation). ${CUT}`, remoteColumns),
    docEntry(rangeTransactions, `Transaction records of each fetch window, per service (v1 range operation). ${CUT}`, transactionColumns),
    docEntry(
      heapUseTable,
      "Heap use per agent and fetch window (at most one hour): averages and maxima share the table, told apart by time_merge.",
      heapUseColumns,
    ),
  ]),
};

// ---- Envelopes: `records` + `total`, and heap use's `data` ----

const rangeEnvelope = objectEnvelope(z.looseObject({ records: recordsArray, total: count }));

const heapUseEnvelope = objectEnvelope(
  z.looseObject({
    pcode: opt(pcode),
    stime: opt(int),
    etime: opt(int),
    timeMerge: opt(z.string()),
    unit: opt(z.string()),
    data: recordsArray,
  }),
);

const heapUseRecord = recordOf(heapUseColumns);
type HeapUse = z.output<typeof heapUseRecord>;

/**
 * Adds the merge the operation asked for (not the echoed `timeMerge`: the old docs show "avg" under
 * /max) and the echoed unit. Row: oid, oname, heap_use, time_merge, unit, extra.
 */
function heapUseExplode(merge: "avg" | "max") {
  return (record: HeapUse, envelope: NonNullable<z.output<typeof heapUseEnvelope>>) => [
    {
      oid: record.oid,
      oname: record.oname,
      heap_use: record.heap_use,
      time_merge: merge,
      unit: envelope.unit ?? null,
      extra: record.extra,
    },
  ];
}

// ---- Operations ----

// Parameter table: account token; sample request and the hosted service's client: project token
// (spec "Note on tokens"). The project token goes first, the account token on refusal (api/auth.ts).
const common = {
  area: "range",
  method: "GET",
  token: "project",
  altToken: "account",
  sendsPcode: true,
  format: "json",
  inSpec: true,
} as const;

/** `measure`: the column that counts calls (or hits): a restatement sums it before and after. */
function rangeRecords(name: string, table: PgTable, columns: Declaration, measure: string, extraPath = "", summary = `${name} records`) {
  return defineOperation({
    ...common,
    id: `range.${name}${extraPath ? ".filtered" : ""}`,
    summary,
    path: `/open/api/json/${name}/{stime}/{etime}${extraPath}`,
    // v1 range records: at most one day (docs/api-notes.md "Limits").
    windowLimitMs: DAY,
    envelope: rangeEnvelope,
    records: { at: "records", schema: recordOf(columns) },
    stream: {
      kind: "aggregate",
      table: getTableName(table),
      enabledByDefault: extraPath === "",
      truncation: "total",
      measure,
      // One partition per configured host/port filter (`inputs`), kept apart by these columns.
      ...(extraPath ? { paramColumns: { host: "filter_host", port: "filter_port" } } : {}),
    },
  });
}

function heapUse(merge: "avg" | "max") {
  return defineOperation({
    ...common,
    id: `range.heap_use.${merge}`,
    summary: `heap use per agent, ${merge}`,
    path: `/open/api/json/heap_use/{stime}/{etime}/${merge}`,
    windowLimitMs: HOUR,
    envelope: heapUseEnvelope,
    records: { at: "data", schema: heapUseRecord, explode: heapUseExplode(merge) },
    // avg and max share the table: the constant time_merge keeps their windows apart. A gauge, no
    // measure: heap sizes do not add up.
    stream: { kind: "aggregate", table: getTableName(heapUseTable), enabledByDefault: true, constants: { time_merge: merge } },
  });
}

export const rangeOperations = [
  rangeRecords("exception", rangeExceptions, exceptionColumns, "count"),
  rangeRecords("httpc", rangeHttpc, httpcColumns, "total"),
  rangeRecords(
    "httpc",
    rangeHttpcByService,
    httpcFilteredColumns,
    "total",
    "/filter/host/{host}/port/{port}",
    "httpc records of one host and port, per service",
  ),
  rangeRecords("sql", rangeSql, sqlColumns, "count_total"),
  rangeRecords("remote", rangeRemote, remoteColumns, "count"),
  rangeRecords("transaction", rangeTransactions, transactionColumns, "count"),
  heapUse("avg"),
  heapUse("max"),
] as const;
