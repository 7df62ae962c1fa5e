// Shared plumbing of the DB verbs: the handle type and statement execution.
import type postgres from "postgres";
import type { Statement } from "./sqlText.ts";

/**
 * How rows reach the tables: `copy` (COPY FROM STDIN on a real Postgres), a `CopyChannel` (COPY
 * handed to the embedded database directly: its protocol has no COPY FROM STDIN), or `json` (JSON batches of
 * json_to_recordset, the path of any other server).
 */
export type WriteEncoding = "copy" | "json" | CopyChannel;

/**
 * COPY text handed to the embedded database in this process, run in the session's open
 * transaction: `statement` is `COPY <table> (<columns>) FROM '/dev/blob'`. Returns the rows copied.
 * The statements sent before it through the socket must have completed (await them first).
 */
export interface CopyChannel {
  copy(statement: string, data: string | Uint8Array): Promise<number>;
}

/** Whether rows go by COPY (text encoders), through the socket or a channel. */
export const byCopy = (encoding: WriteEncoding): encoding is "copy" | CopyChannel => encoding !== "json";

/** The channel of a COPY encoding (undefined: COPY FROM STDIN on the connection). */
export const channelOf = (encoding: "copy" | CopyChannel): CopyChannel | undefined => (encoding === "copy" ? undefined : encoding);

/** Any postgres.js handle: the pool, a transaction, a savepoint or a reserved connection. */
export type SqlHandle = postgres.ISql;

/**
 * Runs a built statement; returns the affected row count. Sent in call order: statements issued
 * one after another without awaiting go out pipelined in that order (see PIPELINING).
 */
export async function execute(sql: SqlHandle, statement: Statement): Promise<number> {
  const result = await sql.unsafe(statement.text, statement.params as postgres.ParameterOrJSON<never>[]).execute();
  return result.count;
}

/**
 * Whether statements on `sql` run one after another on one connection (a transaction), so that
 * they can be pipelined; on a pool two statements may run at once on two connections.
 */
export const onOneConnection = (sql: SqlHandle): boolean => "savepoint" in sql;

/**
 * PIPELINING. postgres.js sends a query when it is first awaited, after a microtask hop whose
 * count depends on how it is awaited; the write path pipelines statements that must run in order
 * (the delete of a window before its COPY), so every statement of it calls `.execute()` where it is
 * made: then queries go out in the order they were made, whoever awaits them and however.
 */

/** Date | epoch ms -> ISO text (the verbs never hand a Date to postgres.js: see connect.ts). */
export function isoTime(value: Date | number): string {
  const d = typeof value === "number" ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) throw new RangeError(`invalid time: ${String(value)}`);
  return d.toISOString();
}

/** Date | epoch ms -> Date. */
export function toDate(value: Date | number): Date {
  return new Date(isoTime(value));
}
