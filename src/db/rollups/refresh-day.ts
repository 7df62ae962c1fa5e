// One marked day of one rollup, in its own transaction: its marks taken (deleted into a temporary
// table), its hours and the day recomputed from the raw rows, their coverage stored from the
// ledger; cancelled when the shutdown grace ends. The refresher (refresh.ts) plans the days.
import type postgres from "postgres";
import { DAY_MS } from "../../windows/grid.ts";
import { LOCK_KEYS } from "../driver/lockKeys.ts";
import { quoteLiteral as literal, quoteIdent as q } from "../sqlText.ts";
import { COVERAGE_TABLE, MARKS_TABLE, ROLLUP_GRAINS, type RollupGrain, type RollupSpec, rollupTableName } from "./spec.ts";
import { bucketColumns, bucketsFromRaw, ledgerCoverage, wholeHour } from "./sql.ts";

const TAKEN = "apm_rollup_taken";

/** A marked day of a rollup: its start, and the projects with marks in it. */
export interface MarkedDay {
  readonly start: Date;
  readonly pcodes: readonly string[];
}

/** One transaction: the marks of one day, refreshed; null when another refresher holds the rollup. */
export async function refreshDay(
  tx: postgres.TransactionSql,
  spec: RollupSpec,
  stream: string | null,
  day: MarkedDay,
  cancel: Canceller,
): Promise<number | null> {
  const [lock] = await tx.unsafe<{ ok: boolean; pid: number }[]>(
    `SELECT pg_try_advisory_xact_lock(${LOCK_KEYS.session}) AS "ok", pg_backend_pid() AS "pid", ${HASHED}, ${BITMAP}`,
    ["rollup-refresh", spec.source],
  );
  if (!lock?.ok) return null;
  const bounds = [day.start.toISOString(), new Date(day.start.getTime() + DAY_MS).toISOString()];
  return cancel.during(lock.pid, async () => {
    await tx.unsafe(`CREATE TEMP TABLE ${TAKEN} ("pcode" bigint, "at" timestamptz, "partial" boolean) ON COMMIT DROP`);
    const [taken] = await tx.unsafe<{ n: number; partial: number }[]>(takeMarks(spec), [...bounds, day.pcodes]);
    if (!taken || taken.n === 0) return 0;
    for (const [text, inDay] of dayStatements(spec, stream, taken.partial > 0)) await tx.unsafe(text, inDay ? bounds : []);
    return taken.n;
  });
}

/**
 * The day's buckets are grouped in a hash table, not sorted: the planner picks a sort and a group
 * for the rollups' many keys and wide rows, at any statistics, which took 55-66 ms for a day of
 * `stat_sql` (14,486 rows of 2 projects) against 32-37 ms hashed (docs/benchmarks.md). For the day's
 * transaction only (set_config's is_local); a hash table larger than the memory allowed spills to disk.
 */
const HASHED = `set_config('enable_sort', 'off', true) AS "hashed"`;

/**
 * The day's raw rows are read by a bitmap scan: the planner's index scan visited the heap in the
 * key's order, a row at a time (24,190 buffer reads for the 14,509 rows of a day of `stat_sql`),
 * where a bitmap scan reads each of the day's pages once. The refresh of the bench's eight days took
 * about a sixth less of the server's CPU and an eighth less time (docs/benchmarks.md). Until the raw
 * statements are done (dayStatements): the coverage's lookups of a few ledger rows each are index
 * scans again.
 */
const BITMAP = `set_config('enable_indexscan', 'off', true) AS "bitmap"`;

/** `column` within the day of the statement's parameters $1 and $2. */
const inDay = (column: string) => `${column} >= $1::timestamptz AND ${column} < $2::timestamptz`;

/** Moves the marks of a day ($1, $2) and its projects ($3) into a temporary table of hours; says how many, and how many partial. */
function takeMarks(spec: RollupSpec): string {
  return `WITH "gone" AS (DELETE FROM ${q(MARKS_TABLE)} AS m WHERE m."source" = ${literal(spec.source)}
    AND m."pcode" = ANY($3::bigint[]) AND ${inDay('m."hour"')}
    RETURNING m."pcode", date_trunc('hour', m."hour", 'UTC') AS "at", m."partial"),
  "kept" AS (INSERT INTO ${TAKEN} SELECT "pcode", "at", bool_or("partial") FROM "gone" GROUP BY "pcode", "at" RETURNING "partial")
SELECT count(*)::int AS "n", count(*) FILTER (WHERE "partial")::int AS "partial" FROM "kept"`;
}

/**
 * The statements recomputing the taken hours and their day (after takeMarks, in its transaction, the
 * lock's settings made), each with whether it reads the day's bounds ($1, $2): the buckets from the
 * raw rows, then their coverage from the ledger (both grains' in one statement). `partial`: some
 * taken hour is partial.
 */
function dayStatements(spec: RollupSpec, stream: string | null, partial: boolean): [string, boolean][] {
  const buckets = (grain: RollupGrain, where = "") =>
    grain === "hourly"
      ? `(SELECT "pcode", "at" FROM ${TAKEN}${where}) AS b`
      : `(SELECT DISTINCT "pcode", date_trunc('day', "at", 'UTC') AS "at" FROM ${TAKEN}) AS b`;
  const raw: [string, boolean][] = [];
  const coverage: string[] = [];
  for (const grain of ROLLUP_GRAINS) {
    const table = q(rollupTableName(spec, grain));
    raw.push([
      `DELETE FROM ${table} AS t USING ${buckets(grain)} WHERE t."pcode" = b."pcode" AND t."bucket_start" = b."at" AND ${inDay('t."bucket_start"')}`,
      true,
    ]);
    // A statistic's whole hours are read from its raw rows by the views: its hourly table sums the
    // others, which only the hours a split leaf (or a window off the hour) wrote can hold.
    const fromRaw = grain === "hourly" && spec.hoursFromRaw;
    const rows = [...(fromRaw ? [`NOT ${wholeHour(spec)}`] : []), inDay(`h.${q(spec.time)}`)].join(" AND ");
    if (!fromRaw || partial)
      raw.push([
        `INSERT INTO ${table} (${bucketColumns(spec).map(q).join(", ")}) ${bucketsFromRaw(spec, grain, buckets(grain, fromRaw ? ` WHERE "partial"` : ""), rows)}`,
        true,
      ]);
    if (spec.coverage && stream)
      coverage.push(
        `SELECT ${literal(stream)}, b."pcode", '${grain}', b."at", ${ledgerCoverage(grain, stream, 'b."pcode"', 'b."at"')} FROM ${buckets(grain)}`,
      );
  }
  if (coverage.length === 0) return raw;
  const upsert = `INSERT INTO ${q(COVERAGE_TABLE)} ("stream", "pcode", "grain", "bucket_start", "coverage")
${coverage.join("\nUNION ALL ")}
ON CONFLICT ("stream", "pcode", "grain", "bucket_start") DO UPDATE SET "coverage" = EXCLUDED."coverage"`;
  return [...raw, ["SET LOCAL enable_indexscan TO DEFAULT", false], [upsert, false]];
}

/**
 * Cancels the statements of the days in flight when the shutdown grace is over (`signal`), by
 * their connections' process ids, from another connection of the pool; the cancellations are
 * awaited before the refresh returns, so none reaches a connection's later statement. Not on one
 * connection (the embedded database): the statement in flight holds it, in this very process.
 */
export class Canceller {
  readonly #pids = new Set<number>();
  readonly #sent: Promise<unknown>[] = [];
  readonly #armed: boolean;
  readonly #cancel = () => {
    for (const pid of this.#pids) this.#send(pid);
  };

  constructor(
    private readonly sql: postgres.Sql,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#armed = signal !== undefined && (sql.options?.max ?? 1) > 1;
    if (this.#armed) signal!.addEventListener("abort", this.#cancel, { once: true });
  }

  #send(pid: number): void {
    this.#sent.push(this.sql`SELECT pg_cancel_backend(${pid})`.catch(() => {}));
  }

  /** Runs a day's statements on connection `pid`, cancelled if the grace ends meanwhile. */
  async during<T>(pid: number, work: () => Promise<T>): Promise<T> {
    this.#pids.add(pid);
    if (this.#armed && this.signal!.aborted) this.#send(pid);
    try {
      return await work();
    } finally {
      this.#pids.delete(pid);
    }
  }

  async dispose(): Promise<void> {
    this.signal?.removeEventListener("abort", this.#cancel);
    await Promise.all(this.#sent);
  }
}
