// Shared plumbing of the DB verbs: the handle type and statement execution.
import type postgres from "postgres";
import type { Statement } from "./sqlText.ts";

/** How rows reach the tables: COPY on a real Postgres, JSON batches on the embedded database. */
export type WriteEncoding = "copy" | "json";

/** Any postgres.js handle: the pool, a transaction, a savepoint or a reserved connection. */
export type SqlHandle = postgres.ISql;

/** Runs a built statement; returns the affected row count. */
export async function execute(sql: SqlHandle, statement: Statement): Promise<number> {
  const result = await sql.unsafe(statement.text, statement.params as postgres.ParameterOrJSON<never>[]);
  return result.count;
}

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
