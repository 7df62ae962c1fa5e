// Engine integration harness: the sandbox over a real socket, a fresh test database, the engine
// in-process through runJob with ONE fixed (settable) clock shared by server and engine, and the
// comparisons the engine tests need (table checksums, per-key sums vs the sandbox ground truth).
import type { DestinationStream } from "pino";
import type postgres from "postgres";
import { createApiClient } from "../../src/api/client.ts";
import { operation } from "../../src/catalogue/index.ts";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/connect.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { type JobRequest, type JobResult, runJob } from "../../src/engine/run.ts";
import type { EngineDeps } from "../../src/engine/types.ts";
import { COUNT_FIELD, type GroundTruth, NATURAL_KEYS, type RequestLogEntry, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { snakeCase } from "../../src/schemas/record.ts";
import { createLogger } from "../../src/util/logger.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const CUBE = 5 * MINUTE;

/** Streams whose records have a count field to compare with the ground truth per key. */
export const COUNTED_STREAMS: readonly string[] = [
  "stat.transaction",
  "stat.sql",
  "stat.httpc",
  "stat.error",
  "stat.remote",
  "range.exception",
  "range.httpc",
  "range.sql",
  "range.remote",
  "range.transaction",
];

/** Environment every engine test runs with: the default 20 rps governor is for the real service. */
export const FAST_ENV: Readonly<Record<string, string>> = {
  APM_RPS: "2000",
  APM_CONCURRENCY: "32",
  APM_WINDOW_CONCURRENCY: "8",
  APM_RETRIES: "3",
  APM_TIMEOUT: "20s",
};

export interface EngineOptions {
  /** Base URL of the API (the sandbox or a tiny test server). */
  readonly baseUrl: string;
  readonly projects: readonly { pcode: number; token: string }[];
  readonly accountToken?: string;
  readonly database: Database;
  readonly now: () => number;
  /** Extra env (APM_START, APM_LOOKBACK...), on top of FAST_ENV. */
  readonly env?: Readonly<Record<string, string>>;
  /** Receives every log line (level warn and above). */
  readonly logs?: string[];
}

/** Runs one job in-process with its own API client (closed afterwards). */
export async function runEngine(opts: EngineOptions, req: JobRequest): Promise<JobResult> {
  const now = opts.now();
  const env: Record<string, string> = {
    ...FAST_ENV,
    APM_BASE_URL: opts.baseUrl,
    APM_PROJECTS: opts.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    DATABASE_URL: "postgres://unused.invalid/db",
    APM_DB_SCHEMA: opts.database.schema,
    APM_LOG_LEVEL: "warn",
    ...(opts.accountToken ? { APM_ACCOUNT_TOKEN: opts.accountToken } : {}),
    ...opts.env,
  };
  const config = loadConfig({ env, now });
  const lines = opts.logs ?? [];
  const destination: DestinationStream = { write: (s: string) => void lines.push(s.trimEnd()) };
  const logger = createLogger({ level: "warn", format: "plain", destination });
  const client = createApiClient(config.api, { logger });
  const deps: EngineDeps = { config, client, database: opts.database, logger, now: opts.now };
  try {
    return await runJob(deps, req);
  } finally {
    await client.close();
  }
}

export interface HarnessOptions {
  /** Start value of the shared clock (server and engine). */
  readonly now: number;
  readonly maxRecords?: number;
  readonly burstKeys?: number;
  readonly projects?: number;
  readonly seed?: number;
  readonly env?: Readonly<Record<string, string>>;
}

export interface EngineHarness {
  readonly sandbox: Sandbox;
  readonly truth: GroundTruth;
  readonly db: TestDatabase;
  readonly sql: postgres.Sql;
  readonly pcodes: readonly number[];
  readonly logs: string[];
  now(): number;
  setNow(ms: number): void;
  /** runJob against the sandbox at the current clock; `env` adds to the harness env. */
  run(req: JobRequest, env?: Readonly<Record<string, string>>): Promise<JobResult>;
  close(): Promise<void>;
}

export async function startEngineHarness(opts: HarnessOptions): Promise<EngineHarness> {
  let clock = opts.now;
  const now = () => clock;
  const sandbox = await startSandbox({
    now,
    seed: opts.seed ?? 1,
    projects: opts.projects ?? 2,
    ...(opts.maxRecords !== undefined ? { maxRecords: opts.maxRecords } : {}),
    ...(opts.burstKeys !== undefined ? { burstKeys: opts.burstKeys } : {}),
  });
  const db = await createTestDatabase();
  const logs: string[] = [];
  return {
    sandbox,
    truth: sandbox.truth,
    db,
    sql: db.sql,
    pcodes: sandbox.projects.map((p) => p.pcode),
    logs,
    now,
    setNow: (ms) => {
      clock = ms;
    },
    run: (req, env) =>
      runEngine(
        {
          baseUrl: sandbox.url,
          projects: sandbox.projects,
          accountToken: sandbox.accountToken,
          database: db,
          now,
          env: { ...opts.env, ...env },
          logs,
        },
        req,
      ),
    close: async () => {
      await sandbox.stop();
      await db.drop();
    },
  };
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

/** The warehouse table of a stream id (catalogue). */
export function tableOf(opId: string): string {
  const table = operation(opId).stream?.table;
  if (!table) throw new Error(`${opId} is not a stream`);
  return table;
}

/** SQL text of a column as the sandbox prints it in naturalKey (epoch ms for times). */
function keyExpr(table: string, column: string): string {
  const type = tableInfo(table).types.get(column);
  if (!type) throw new Error(`${table} has no column ${column}`);
  return type.startsWith("timestamp") ? `(extract(epoch from "${column}") * 1000)::bigint::text` : `"${column}"::text`;
}

/**
 * Per natural key (the sandbox's `field=value|...` form), the sum of the stream's count field
 * in Postgres over windows inside [from, to), leaving out the windows listed in `exclude`.
 * API field names map to columns by the warehouse's one rule, snakeCase (Service_hash -> service_hash).
 */
export async function dbCountsByKey(
  sql: postgres.Sql,
  opId: string,
  pcode: number,
  from: number,
  to: number,
  exclude: readonly { start: number; end: number }[] = [],
): Promise<Map<string, number>> {
  const table = tableOf(opId);
  const fields = NATURAL_KEYS[opId]!;
  const countColumn = snakeCase(COUNT_FIELD[opId]!);
  const keyParts = fields.map((f) => `'${f}=' || coalesce(${keyExpr(table, snakeCase(f))}, 'null')`).join(` || '|' || `);
  const rows = await sql.unsafe<{ k: string; n: string }[]>(
    `SELECT ${keyParts} AS k, sum("${countColumn}")::text AS n FROM "${table}" t
      WHERE pcode = $1 AND window_start >= $2 AND window_end <= $3
        AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($4::jsonb) AS x(s bigint, e bigint)
                         WHERE t.window_start = to_timestamp(x.s / 1000.0) AND t.window_end = to_timestamp(x.e / 1000.0))
      GROUP BY 1`,
    [pcode, new Date(from), new Date(to), JSON.stringify(exclude.map((w) => ({ s: w.start, e: w.end })))],
  );
  return new Map(rows.map((r) => [r.k, Number(r.n)]));
}

/** Ground truth per key over [from, to), minus the cubes starting in `excludeCubes`. */
export function truthCountsByKey(
  truth: GroundTruth,
  pcode: number,
  opId: string,
  from: number,
  to: number,
  excludeCubes: readonly number[] = [],
): Map<string, number> {
  const out = truth.countsByKey(pcode, opId, from, to);
  for (const cube of excludeCubes) {
    for (const [k, n] of truth.countsByKey(pcode, opId, cube, cube + CUBE)) {
      const left = (out.get(k) ?? 0) - n;
      if (left === 0) out.delete(k);
      else out.set(k, left);
    }
  }
  return out;
}

/** Keys whose values differ between two maps (at most `max`), for readable failures. */
export function mapDiff(actual: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>, max = 5): string[] {
  const out: string[] = [];
  for (const k of new Set([...actual.keys(), ...expected.keys()])) {
    if (actual.get(k) !== expected.get(k)) out.push(`${k}: db ${actual.get(k)} truth ${expected.get(k)}`);
    if (out.length >= max) break;
  }
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
  for (const wm of await watermarkRows(sql, opId)) {
    const covered = (await ledgerRows(sql, { stream: opId }))
      .filter((l) => l.pcode === wm.pcode && l.status !== "failed")
      .sort((a, b) => a.start - b.start);
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

/**
 * Compares one stream of one project with the ground truth over [from, to), leaving out the
 * windows the ledger marks truncated (their truth is checked separately). Returns the Postgres
 * sums and the differing keys (empty when equal).
 */
export async function compareWithTruth(
  h: Pick<EngineHarness, "sql" | "truth">,
  opId: string,
  pcode: number,
  from: number,
  to: number,
): Promise<{ db: Map<string, number>; truthKeys: number; diff: string[] }> {
  const truncated = (await ledgerRows(h.sql, { stream: opId, status: "truncated" })).filter(
    (l) => l.pcode === pcode && l.start >= from && l.end <= to,
  );
  const db = await dbCountsByKey(h.sql, opId, pcode, from, to, truncated);
  const truth = truthCountsByKey(
    h.truth,
    pcode,
    opId,
    from,
    to,
    truncated.map((w) => w.start),
  );
  const diff = mapDiff(db, truth);
  if (db.size !== truth.size) diff.push(`keys: db ${db.size} truth ${truth.size}`);
  return { db, truthKeys: truth.size, diff };
}

/** GET a sandbox path as project `pcode` (raw JSON.parse: for values below 2^53 only). */
export async function sandboxGet(sandbox: Sandbox, pcode: number, path: string): Promise<unknown> {
  const project = sandbox.projects.find((p) => p.pcode === pcode);
  if (!project) throw new Error(`sandbox has no project ${pcode}`);
  const res = await fetch(`${sandbox.url}${path}`, {
    headers: { [sandbox.tokenHeader]: project.token, [sandbox.pcodeHeader]: String(pcode) },
  });
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.json();
}
