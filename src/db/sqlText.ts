// SQL text built from declarations (staging tables, views, rollup refreshes, DDL), quoted here and run
// with `sql.unsafe`; statements with values are postgres.js tagged templates instead (docs/development.md
// "How SQL is written"). Identifiers are always quoted: some API fields are SQL keywords (`desc`, `user`,
// `class`, `interval`). Rows come from a staging table filled by COPY (write/rowSink.ts); values shared by
// every row are parameters.

import { GONE_STATUSES } from "../windows/types.ts";
import type { TableInfo } from "./tables.ts";

/** A statement with positional parameters. */
export interface Statement {
  readonly text: string;
  readonly params: readonly unknown[];
  /**
   * false for a text naming an object made for one call (a staging table). Other statements are
   * prepared: the connection keeps one per distinct text, and later calls skip the round trip that
   * asks the server for their parameter types (exec.ts).
   */
  readonly prepare?: false;
}

/** Column = value conditions that pin a write to one slice of a table (pcode, time_merge, ...). */
export type Scope = Readonly<Record<string, string | number | bigint | boolean | Date>>;

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A text as an SQL string literal (standard_conforming_strings: only quotes are doubled). */
/** GONE_STATUSES as an SQL list, for `"status" IN` / `NOT IN`. */
export const GONE_SQL = `(${GONE_STATUSES.map((s) => `'${s}'`).join(", ")})`;

export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Fails on a column the table does not have: a mapper bug must not reach SQL as a late error. */
export function assertColumns(info: TableInfo, columns: readonly string[]): void {
  const unknown = columns.filter((c) => !info.types.has(c));
  if (unknown.length > 0) throw new Error(`${info.name}: unknown column(s) ${unknown.join(", ")}`);
  if (new Set(columns).size !== columns.length) throw new Error(`${info.name}: duplicate column in ${columns.join(", ")}`);
}

function castParam(info: TableInfo, column: string, index: number): string {
  return `$${index}::${info.types.get(column)}`;
}

function scopeValue(value: Scope[string]): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** `"c" = $n::type AND ...` for a scope, numbering parameters from `first`. */
export function scopeWhere(info: TableInfo, scope: Scope, first: number, alias?: string): { sql: string; params: unknown[] } {
  const cols = Object.keys(scope);
  assertColumns(info, cols);
  const prefix = alias ? `${alias}.` : "";
  return {
    sql: cols.map((c, i) => `${prefix}${quoteIdent(c)} = ${castParam(info, c, first + i)}`).join(" AND "),
    params: cols.map((c) => scopeValue(scope[c]!)),
  };
}

/**
 * INSERT of the rows of `staged` (a quoted table holding `columns`, filled by COPY, or a subquery of it); `constants`
 * (pcode, scope columns) are parameters $1, $2, ... shared by every row.
 */
function insertFromStaged(info: TableInfo, columns: readonly string[], constants: Scope, staged: string): Statement {
  const constCols = Object.keys(constants);
  assertColumns(info, [...constCols, ...columns]);
  const target = [...constCols, ...columns].map(quoteIdent).join(", ");
  const select = [...constCols.map((c, i) => castParam(info, c, i + 1)), ...columns.map((c) => `x.${quoteIdent(c)}`)].join(", ");
  return {
    text: `INSERT INTO ${quoteIdent(info.name)} (${target}) SELECT ${select} FROM ${staged} AS x`,
    prepare: false,
    params: constCols.map((c) => scopeValue(constants[c]!)),
  };
}

/**
 * DELETE of the rows of one window and of every sub-window inside it (splits), within a scope.
 * Parameters: pcode, window start, window end, then the scope values.
 */
export function deleteWindow(info: TableInfo, pcode: number | bigint, windowStart: Date, windowEnd: Date, scope: Scope = {}): Statement {
  const where = windowWhere(info, pcode, windowStart, windowEnd, scope);
  return { text: `DELETE FROM ${quoteIdent(info.name)} WHERE ${where.text}`, params: where.params };
}

/**
 * The rows of one window and of every sub-window inside it, within a scope: what a replace deletes.
 * Parameters from $1: pcode, window start, window end, then the scope values. `window_start < end`
 * follows from the others (every row's window ends after it starts: rowSink.ts), and bounds the
 * index scan and the partitions read: without it a window's statement read every later row of its
 * project, so refetching a long range read the table once per window.
 */
export function windowWhere(info: TableInfo, pcode: number | bigint, windowStart: Date, windowEnd: Date, scope: Scope = {}): Statement {
  const extra = scopeWhere(info, scope, 4);
  const where = [
    `"pcode" = $1::bigint`,
    `"window_start" >= $2::timestamptz`,
    `"window_start" < $3::timestamptz`,
    `"window_end" <= $3::timestamptz`,
  ];
  if (extra.sql) where.push(extra.sql);
  return { text: where.join(" AND "), params: [scopeValue(pcode), windowStart.toISOString(), windowEnd.toISOString(), ...extra.params] };
}

/**
 * The rows of `staged` (an upsert's staging table: the written columns and their arrival order,
 * `apm_ord`) with one row per key, the last to arrive, as a subquery. `identity`: the key columns
 * staged (those not sent as constants).
 */
export function latestStaged(staged: string, identity: readonly string[]): string {
  const order = `"apm_ord" DESC`;
  if (identity.length === 0) return `(SELECT * FROM ${staged} ORDER BY ${order} LIMIT 1)`;
  const ids = identity.map(quoteIdent).join(", ");
  return `(SELECT DISTINCT ON (${ids}) * FROM ${staged} ORDER BY ${ids}, ${order})`;
}

/** The key columns that tell an upsert's rows apart: a movable row is one row whatever its time. */
export function upsertIdentity(info: TableInfo, keyColumns: readonly string[], constants: Scope): string[] {
  return keyColumns.filter((k) => !(k in constants) && !(info.movable && k === info.partitionColumn));
}

/**
 * DELETE of the stored rows that the rows of `staged` replace under another time: same key but
 * for the partition column (a table declared `movable`, db/schema). The upsert then writes them at
 * their new time. `constants` are key columns sent once as parameters, as in upsertFromStaged. The
 * stored row's time is unknown, so every partition is searched: the staged keys are also given as
 * arrays (computed once), so that each partition's key index finds them (not a scan of each).
 */
export function deleteMovedFromStaged(info: TableInfo, keyColumns: readonly string[], constants: Scope, staged: string): Statement {
  const time = info.partitionColumn;
  if (time === null || !info.movable) throw new Error(`${info.name}: its rows do not move between partitions`);
  const t = quoteIdent(info.name);
  const fixed = scopeWhere(info, pick(constants, keyColumns), 1, t);
  const keys = upsertIdentity(info, keyColumns, constants);
  const listed = keys.map((k) => `${t}.${quoteIdent(k)} = ANY(ARRAY(SELECT ${quoteIdent(k)} FROM ${staged}))`);
  const joined = keys.map((k) => `${t}.${quoteIdent(k)} = x.${quoteIdent(k)}`);
  const where = [...(fixed.sql ? [fixed.sql] : []), ...listed, ...joined, `${t}.${quoteIdent(time)} <> x.${quoteIdent(time)}`];
  return {
    text: `DELETE FROM ${t} USING ${latestStaged(staged, keys)} AS x WHERE ${where.join(" AND ")}`,
    params: fixed.params,
    prepare: false,
  };
}

function pick(scope: Scope, keys: readonly string[]): Scope {
  return Object.fromEntries(Object.entries(scope).filter(([k]) => keys.includes(k)));
}

/**
 * INSERT .. ON CONFLICT (key) DO UPDATE. Dimensions (with last_seen_at) are always touched:
 * last_seen_at moves and deleted_at is cleared (a reappearing row). Other tables are only
 * rewritten when a value differs, so re-fetching an unchanged window changes no row.
 * `constants` are written to every row from parameters (pcode, series_form, ...), as in insertFromStaged.
 * `staged` is an upsert's staging table (latestStaged): a key staged twice is written once, its last row.
 */
export function upsertFromStaged(
  info: TableInfo,
  columns: readonly string[],
  keyColumns: readonly string[],
  constants: Scope,
  staged: string,
): Statement {
  const written = [...Object.keys(constants), ...columns];
  const missing = keyColumns.filter((k) => !written.includes(k));
  if (missing.length > 0) throw new Error(`${info.name}: key column(s) ${missing.join(", ")} not among the written columns`);
  const insert = insertFromStaged(info, columns, constants, latestStaged(staged, upsertIdentity(info, keyColumns, constants)));
  const sets = written.filter((c) => !keyColumns.includes(c)).map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`);
  if (info.hasLastSeenAt && !columns.includes("last_seen_at")) sets.push(`"last_seen_at" = now()`);
  if (info.hasDeletedAt && !columns.includes("deleted_at")) sets.push(`"deleted_at" = NULL`);
  if (info.hasSyncedAt && !columns.includes("synced_at")) sets.push(`"synced_at" = now()`);
  const conflict = `ON CONFLICT (${keyColumns.map(quoteIdent).join(", ")})`;
  if (sets.length === 0) return { ...insert, text: `${insert.text} ${conflict} DO NOTHING` };
  let text = `${insert.text} ${conflict} DO UPDATE SET ${sets.join(", ")}`;
  const compared = written.filter((c) => !keyColumns.includes(c) && !info.bookkeeping.has(c));
  if (!info.hasLastSeenAt && compared.length > 0) {
    const t = quoteIdent(info.name);
    const left = compared.map((c) => `${t}.${quoteIdent(c)}`).join(", ");
    const right = compared.map((c) => `EXCLUDED.${quoteIdent(c)}`).join(", ");
    text += ` WHERE (${left}) IS DISTINCT FROM (${right})`;
  }
  return { ...insert, text };
}

/**
 * Marks rows of a scope whose key is not among the rows of `staged` (its columns: the key columns
 * not fixed by the scope, see `presentKeyColumns`) as deleted; `null` staged: no row is present.
 * Dimension keys are NOT NULL, so plain `=` lets Postgres use a hash anti-join. Parameter $1 is
 * the run id.
 */
export function softDeleteFromStaged(info: TableInfo, scope: Scope, keyColumns: readonly string[], staged: string | null): Statement {
  const t = quoteIdent(info.name);
  const where = scopeWhere(info, scope, 2, t);
  const keys = presentKeyColumns(info, scope, keyColumns);
  const conditions = [`${t}."deleted_at" IS NULL`];
  if (where.sql) conditions.unshift(where.sql);
  if (staged !== null) {
    if (keys.length === 0) throw new Error(`${info.name}: a staged list needs a key column beyond the scope`);
    const match = keys.map((c) => `k.${quoteIdent(c)} = ${t}.${quoteIdent(c)}`).join(" AND ");
    conditions.push(`NOT EXISTS (SELECT 1 FROM ${staged} AS k WHERE ${match})`);
  }
  return {
    text: `UPDATE ${t} SET "deleted_at" = now(), "run_id" = $1::bigint WHERE ${conditions.join(" AND ")}`,
    params: [null, ...where.params],
    ...(staged === null ? {} : { prepare: false as const }),
  };
}

/**
 * The key columns a present row must name for a soft delete: those the scope does not fix (with
 * none left, any present row keeps the scope's one row).
 */
export function presentKeyColumns(info: TableInfo, scope: Scope, keyColumns: readonly string[]): string[] {
  if (!info.hasDeletedAt) throw new Error(`${info.name} has no deleted_at column`);
  assertColumns(info, keyColumns);
  return keyColumns.filter((k) => !(k in scope));
}

/**
 * The condition on sync_windows of the windows `prune` marks when it drops the partitions before
 * `until`: those of `streams` starting before it, not marked yet (pruned, or archived). Parameters $1 (streams), $2 (until).
 */
export function prunableWindows(streams: readonly string[], until: Date): Statement {
  return {
    text: `"stream" = ANY($1::text[]) AND "window_start" < $2::timestamptz AND "status" NOT IN ${GONE_SQL}`,
    params: [streams, until.toISOString()],
  };
}
