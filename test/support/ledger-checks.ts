// Checks on what a run left in the database: checksums, the ledger against the rows, watermarks
// against the ledger, requests against the operations' limits.
import type postgres from "postgres";
import { operation } from "../../src/catalogue/index.ts";
import type { RequestLogEntry } from "../../src/sandbox/index.ts";
import { CUBE } from "./time.ts";

/** The warehouse table of a stream id (catalogue). */
export function tableOf(opId: string): string {
  const table = operation(opId).stream?.table;
  if (!table) throw new Error(`${opId} is not a stream`);
  return table;
}

/** Columns left out of every checksum: they say when/by which run, not what. */
export const VOLATILE_COLUMNS = ["synced_at", "run_id", "first_seen_at", "last_seen_at"] as const;

/**
 * md5 over every row of a table as JSON minus the volatile columns (and `exclude`), in a
 * deterministic order: equal checksums mean no row was added, removed or changed.
 */
export async function tableChecksum(sql: postgres.Sql, table: string, exclude: readonly string[] = []): Promise<string> {
  const minus = [...VOLATILE_COLUMNS, ...exclude].map((c) => ` - '${c}'`).join("");
  const [row] = await sql.unsafe<{ sum: string; n: number }[]>(
    `SELECT md5(coalesce(string_agg(j, E'\\n' ORDER BY j), '')) AS sum, count(*)::int AS n
       FROM (SELECT (to_jsonb(t)${minus})::text AS j FROM "${table}" t) x`,
  );
  return `${row!.n}:${row!.sum}`;
}

/** Checksums of several tables, by table name. */
export async function checksums(sql: postgres.Sql, tables: readonly string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of tables) out[t] = await tableChecksum(sql, t);
  return out;
}

export interface LedgerRow {
  readonly stream: string;
  readonly pcode: number;
  readonly start: number;
  readonly end: number;
  readonly status: string;
  readonly expectedTotal: number | null;
  readonly rowsFetched: number;
  readonly rowsWritten: number;
  readonly splits: number;
  readonly runId: number | null;
}

/** Ledger rows, optionally of one stream / status. */
export async function ledgerRows(sql: postgres.Sql, filter: { stream?: string; status?: string } = {}): Promise<LedgerRow[]> {
  const rows = await sql<Record<string, unknown>[]>`
    SELECT stream, pcode::float8 AS pcode, (extract(epoch from window_start) * 1000)::float8 AS s,
      (extract(epoch from window_end) * 1000)::float8 AS e, status, expected_total::float8 AS expected,
      rows_fetched::float8 AS fetched, rows_written::float8 AS written, splits, run_id::float8 AS run_id
    FROM sync_windows
    WHERE (${filter.stream ?? null}::text IS NULL OR stream = ${filter.stream ?? null})
      AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
    ORDER BY stream, pcode, window_start`;
  return rows.map((r) => ({
    stream: r.stream as string,
    pcode: r.pcode as number,
    start: r.s as number,
    end: r.e as number,
    status: r.status as string,
    expectedTotal: r.expected as number | null,
    rowsFetched: r.fetched as number,
    rowsWritten: r.written as number,
    splits: r.splits as number,
    runId: r.run_id as number | null,
  }));
}

/** Requests of the log that break an operation's window limit or the 5-minute grid. */
export function windowViolations(log: readonly RequestLogEntry[]): string[] {
  const out: string[] = [];
  for (const e of log) {
    if (e.opId === null || e.stime === null || e.etime === null) continue;
    const limit = operation(e.opId).windowLimitMs;
    const what = `${e.opId} ${new Date(e.stime).toISOString()}..${new Date(e.etime).toISOString()}`;
    if (limit !== null && e.etime - e.stime > limit) out.push(`${what}: longer than the limit ${limit} ms`);
    if (e.etime <= e.stime) out.push(`${what}: empty or reversed`);
    if (e.stime % CUBE !== 0 || e.etime % CUBE !== 0) out.push(`${what}: off the 5-minute grid`);
  }
  return out;
}

// ---- Ledger invariants (crash, fault and overlap tests) ----

/** `col = 'value'` conditions of a stream's constant columns (e.g. heap_use time_merge). */
function constantsWhere(opId: string, alias: string): string {
  const constants = operation(opId).stream?.constants ?? {};
  return Object.entries(constants)
    .map(([c, v]) => ` AND ${alias}."${c}" = '${String(v).replace(/'/g, "''")}'`)
    .join("");
}

/**
 * What a crash must never leave behind, for windowed aggregate streams: (1) a done/truncated
 * ledger window whose stored rows differ in number from its rows_written (rows and ledger row
 * are one transaction); (2) stored rows of a window without a done/truncated ledger row;
 * (3) a watermark beyond an instant (from `startMs`) not covered by done/truncated windows.
 * Returns readable violations; empty means consistent.
 */
export async function ledgerViolations(sql: postgres.Sql, streams: readonly string[], startMs: number): Promise<string[]> {
  const out: string[] = [];
  for (const opId of streams) {
    const table = tableOf(opId);
    const mismatched = await sql.unsafe<{ pcode: string; s: Date; n: string; w: string }[]>(
      `SELECT l.pcode::text AS pcode, l.window_start AS s, coalesce(t.n, 0)::text AS n, l.rows_written::text AS w
         FROM sync_windows l
         LEFT JOIN (SELECT pcode, window_start, window_end, count(*) AS n FROM "${table}" x WHERE true${constantsWhere(opId, "x")}
                     GROUP BY 1, 2, 3) t USING (pcode, window_start, window_end)
        WHERE l.stream = $1 AND l.status IN ('done', 'truncated') AND coalesce(t.n, 0) <> l.rows_written`,
      [opId],
    );
    for (const m of mismatched)
      out.push(`${opId} ${m.pcode} ${m.s.toISOString()}: ledger says ${m.w} rows written, the table holds ${m.n}`);
    const orphans = await sql.unsafe<{ pcode: string; s: Date; e: Date; n: string }[]>(
      `SELECT t.pcode::text AS pcode, t.window_start AS s, t.window_end AS e, count(*)::text AS n FROM "${table}" t
        WHERE true${constantsWhere(opId, "t")} AND NOT EXISTS (
          SELECT 1 FROM sync_windows l WHERE l.stream = $1 AND l.pcode = t.pcode AND l.status IN ('done', 'truncated')
             AND l.window_start = t.window_start AND l.window_end = t.window_end)
        GROUP BY 1, 2, 3`,
      [opId],
    );
    for (const o of orphans)
      out.push(`${opId} ${o.pcode} ${o.s.toISOString()}..${o.e.toISOString()}: ${o.n} rows without a done ledger window`);
    out.push(...(await watermarkViolations(sql, opId, startMs)));
  }
  return out;
}

/** Watermarks of a stream that pass an instant not covered by done/truncated ledger windows. */
async function watermarkViolations(sql: postgres.Sql, opId: string, startMs: number): Promise<string[]> {
  const out: string[] = [];
  const ledger = await ledgerRows(sql, { stream: opId });
  for (const wm of await watermarkRows(sql, opId)) {
    // In window order already (ledgerRows).
    const covered = ledger.filter((l) => l.pcode === wm.pcode && l.status !== "failed");
    let at = startMs;
    for (const l of covered) if (l.start <= at && l.end > at) at = l.end;
    if (at < wm.watermark)
      out.push(`${opId} ${wm.pcode}: watermark ${new Date(wm.watermark).toISOString()} passed ${new Date(at).toISOString()}, not written`);
  }
  return out;
}

export interface WatermarkRow {
  readonly stream: string;
  readonly pcode: number;
  readonly partition: string;
  readonly watermark: number;
}

/** Rows of `watermarks` (epoch ms), optionally of one stream. */
export async function watermarkRows(sql: postgres.Sql, stream?: string): Promise<WatermarkRow[]> {
  const rows = await sql<{ stream: string; pcode: number; partition: string; ms: number }[]>`
    SELECT stream, pcode::float8 AS pcode, partition, (extract(epoch from watermark) * 1000)::float8 AS ms FROM watermarks
    WHERE ${stream ?? null}::text IS NULL OR stream = ${stream ?? null} ORDER BY stream, pcode, partition`;
  return rows.map((r) => ({ stream: r.stream, pcode: r.pcode, partition: r.partition, watermark: r.ms }));
}

/** Advisory locks held in the current database (a killed process must not leave any). */
export async function advisoryLocksHeld(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_locks
    WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
  return row!.n;
}
