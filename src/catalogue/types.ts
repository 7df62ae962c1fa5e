import type { z } from "zod";

/** Which credential an operation needs. */
export type TokenKind = "account" | "project";

/** How a stream's rows are written (docs/design.md "Streams"). */
export type StreamKind = "dimension" | "snapshot" | "aggregate" | "points";

/**
 * Whether a kind of stream is fetched window by window (planned from the ledger) or captured
 * whole once per run. The kind decides; `windowLimitMs` only says how long a request may span.
 */
export const WINDOWED_KINDS: Readonly<Record<StreamKind, boolean>> = { dimension: false, snapshot: false, aggregate: true, points: true };

/**
 * A stream fetched once per key of a parent stream's list (Airbyte's `ParentStreamConfig`, dlt's
 * resolved parameters): members once per listed project, per listed group. The key is the ledger
 * partition of the child, fills a request parameter, is written to a column of every row, and is
 * the scope a complete list soft-deletes within.
 */
export interface ParentSpec {
  /** The operation whose table lists the keys, e.g. `account.projects`. */
  readonly stream: string;
  /** Column of the parent's table that holds the key (`pcode`, `group_key`). */
  readonly key: string;
  /** Request parameter the key fills (`{projectCode}` in the path). */
  readonly param: string;
  /** Column of the child's table written with the key on every row. */
  readonly column: string;
  /** Keys that cannot be asked for (the server masks some group keys: "grp****ab12"), and why. */
  readonly skip?: { readonly when: (key: string) => boolean; readonly why: string };
}

/**
 * Rows that stay open (events not yet resolved): open while every `nullColumns` is null and no
 * `trueColumns` is true. Their windows (of the rows' times, in the table's time column: its
 * partition column, db/schema) are re-read every incremental run for up to `openEventLookback`,
 * so that the resolution is seen.
 */
export interface OpenRowsSpec {
  readonly nullColumns: readonly string[];
  readonly trueColumns: readonly string[];
}

/**
 * Parameters a request is built from. Values are substituted into `{name}` placeholders of the
 * path, or sent as query string / JSON body when the operation lists the name there.
 * Arrays are sent as comma lists (oids).
 */
export type RequestParams = Record<
  string,
  string | number | boolean | readonly (string | number)[] | Readonly<Record<string, string>> | undefined
>;

/**
 * Where the records of a response sit and how one record is validated.
 *
 * Rules applied by `parseResponse` (src/api/parse-response.ts):
 * - the envelope schema runs first; a failure throws SchemaDriftError (the whole window fails);
 * - a parsed envelope of `null` means "no data" (empty body, `[]`, event history's 204 body): no records;
 * - an operation WITHOUT `records` (project detail, spot values, scalars, server counts, tx_caller/
 *   tx_domain calls) is a single-record response: its envelope schema IS the record schema and
 *   the records are `[envelope]`;
 * - otherwise each element of the array at `at` is validated by `schema` (failures are quarantined)
 *   and, when `explode` is given, replaced by the rows it returns.
 */
export interface RecordsSpec {
  /** Key of the records array in the parsed envelope; `null` when the body itself is the array. */
  readonly at: string | null;
  /** Schema for ONE record; a record that fails it is quarantined, the rest of the page is kept. */
  readonly schema: z.ZodType;
  /**
   * Turns one validated record into flat row-shaped items (series -> points, settings -> entries),
   * given the parsed envelope. Parameters are typed `never` so that any typed function fits.
   */
  readonly explode?: (record: never, envelope: never) => unknown[];
}

/** Stream side of an operation: how its data lands in the warehouse (issue 4 fills this in). */
export interface StreamSpec {
  readonly kind: StreamKind;
  /** `account`: a stream of the account (account token, no project); default: one project's. */
  readonly scope?: "account" | "project";
  /** Target table in the warehouse schema (docs/design.md "Warehouse contract"). */
  readonly table: string;
  /** Synced by default by `sync`; false for forms that need extra input (listed oids, filters). */
  readonly enabledByDefault: boolean;
  /** Default grain of a windowed stream (config `grains` wins; else the global grain, 1 h). */
  readonly grainMs?: number;
  /** Default lookback re-read every incremental run (config wins; else the global lookback). */
  readonly lookbackMs?: number;
  /** Fetched once per key of a parent stream's list (fan-out). */
  readonly parent?: ParentSpec;
  /** Columns with the same value on every row of the stream (metric name, series form, granularity). */
  readonly constants?: Readonly<Record<string, string | number>>;
  /** Record keys stored under another column name (e.g. `project_code` -> `pcode`). */
  readonly rename?: Readonly<Record<string, string>>;
  /**
   * Request inputs written to a column of every row (e.g. the host/port filter a partition asked
   * for); they also scope the replace of a window, so partitions never clobber each other.
   */
  readonly paramColumns?: Readonly<Record<string, string>>;
  /** Columns computed from the (renamed) row, e.g. the events' natural key. */
  readonly derive?: (row: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /**
   * How a response shows that the record cap cut it: `retrievedTotal` (v2 statistics:
   * total > retrievedTotal) or `total` (v1 range records: total above the records returned).
   */
  readonly truncation?: "retrievedTotal" | "total";
  /**
   * The envelope echoes the range it answered for (`stime`/`etime`); an echoed etime before the
   * requested one means the server clamped it to its clock (spec statistics rule 2), so the window
   * is not complete and must not be recorded as done.
   */
  readonly echoesWindow?: boolean;
  /** Rows that stay open: their windows are re-read (see OpenRowsSpec). */
  readonly reReadOpen?: OpenRowsSpec;
  /**
   * The numeric column of an aggregate's table that says how much happened (calls, hits): a
   * window fetched again whose rows differ is recorded in `restatements` with its sum before and
   * after (db/history/restatements.ts). None where no column adds up (gauges, JSON payloads).
   */
  readonly measure?: string;
}

/**
 * One operation of the Open API, declared once. The client, the sandbox, the conformance test and
 * the engine all read this entry; nothing else may hard-code a path.
 */
export interface OperationDef {
  /** Stable id, e.g. `stat.transaction`, `range.exception`, `series.thread_count.avg`. */
  readonly id: string;
  readonly summary: string;
  readonly area: "account" | "project" | "events" | "scalar" | "range" | "series" | "visitors" | "calls" | "stats" | "extra";
  readonly method: "GET" | "POST";
  /** Path template relative to the base URL, placeholders in braces. */
  readonly path: string;
  /** Parameter names sent as query string (GET). */
  readonly query?: readonly string[];
  /** Parameter names sent in a JSON body (POST). */
  readonly body?: readonly string[];
  /** Schema of the JSON request body of a POST operation (checked against the docs' request samples). */
  readonly requestSchema?: z.ZodType;
  /** Per-parameter encoders, e.g. base64 for `caller_url`/`url` filter values. */
  readonly encode?: Readonly<Record<string, (value: string, params: RequestParams) => string>>;
  readonly token: TokenKind;
  /**
   * The spec leaves open which token the operation takes (range and series: the parameter table
   * names the account token, the samples send the project token). `token` is tried first,
   * `altToken` when `token` is refused or not configured; what worked is remembered (api/auth.ts).
   */
  readonly altToken?: TokenKind;
  /** Other documented paths of the operation, tried in order when the server answers 404 (groups: v2 and v1). */
  readonly altPaths?: readonly string[];
  /** Whether the project-code header is sent. */
  readonly sendsPcode: boolean;
  /** `text` for the bare text/plain scalar operations. */
  readonly format: "json" | "text";
  /** Hard API limit on etime - stime in ms; `null` for operations without a time window. */
  readonly windowLimitMs: number | null;
  /**
   * Body field that says when the server produced the answer, to the millisecond (statistics:
   * `timestamp`); it tells the server's clock more finely than the Date header.
   */
  readonly clockField?: string;
  /** Schema of the whole body (records left as unknown[] for per-record parsing). */
  readonly envelope: z.ZodType;
  readonly records?: RecordsSpec;
  /** Method and path may be overridden from config (spec leaves them open, docs/api-notes.md). */
  readonly overridable?: boolean;
  /** `false` for operations documented by the hosted service but not in our spec. */
  readonly inSpec: boolean;
  readonly stream?: StreamSpec;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Windowed (planned from the ledger) rather than captured once per run. */
export function isWindowed(stream: StreamSpec): boolean {
  return WINDOWED_KINDS[stream.kind];
}

/** A stream of the account (projects, groups, members) rather than of one project. */
export function isAccountStream(op: OperationDef): boolean {
  return op.stream?.scope === "account";
}

/** Identity helper that type-checks an entry (the drizzle `defineConfig` idea). */
export function defineOperation<const T extends OperationDef>(def: T): T {
  return def;
}
