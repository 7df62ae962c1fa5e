// Shared plumbing of the DB verbs: the handle types and statement execution.
import type postgres from "postgres";
import type { Statement } from "../sqlText.ts";

/** Any postgres.js handle: the pool, a transaction, a savepoint or a reserved connection. */
export type SqlHandle = postgres.ISql;

/**
 * A transaction: its statements run one after another on one connection, so a verb of several
 * statements sends them pipelined (PIPELINING), and a staging table lives until its commit.
 */
export type TxHandle = postgres.TransactionSql;

/**
 * Runs a built statement; returns the affected row count. Sent in call order: statements issued
 * one after another without awaiting go out pipelined in that order (see PIPELINING).
 */
export async function execute(sql: SqlHandle, statement: Statement): Promise<number> {
  const params = statement.params as postgres.ParameterOrJSON<never>[];
  const result = await sql.unsafe(statement.text, params, { prepare: statement.prepare ?? true }).execute();
  return result.count;
}

/**
 * PIPELINING. postgres.js sends a query when it is first awaited, after a microtask hop whose
 * count depends on how it is awaited; the write path pipelines statements that must run in order
 * (the delete of a window before its COPY), so every statement of it calls `.execute()` where it is
 * made: then queries go out in the order they were made, whoever awaits them and however.
 */

/**
 * A statement sent now and awaited later (PIPELINING): its failure reaches whoever awaits it, never
 * the process as an unhandled rejection. The one place the rule is written.
 */
export function pipelined<T>(statement: Promise<T>): Promise<T> {
  statement.catch(() => {});
  return statement;
}

/**
 * Statements of one transaction sent one after another without waiting for each other
 * (PIPELINING). `send` keeps each: its failure reaches whoever awaits its result, and `settle`,
 * never the process as an unhandled rejection. The transaction's own failure is reported by the
 * statement that awaited first; the rest settle with it.
 */
export class Pipeline {
  readonly #sent: Promise<unknown>[] = [];

  send<T>(statement: Promise<T>): Promise<T> {
    this.#sent.push(pipelined(statement));
    return statement;
  }

  /** Waits for every statement sent; throws the first failure. */
  async settle(): Promise<void> {
    await Promise.all(this.#sent);
  }
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
