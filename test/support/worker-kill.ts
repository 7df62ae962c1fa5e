// Killed-worker iterations (issue 31 point 4): a 1-day backfill queued in chunks, three real
// `worker --until-idle` processes, one killed with -9 at a chosen point (between the leaves of a
// split window, inside a write transaction, after some requests, or a second kill while the dead
// one's job is being recovered), then every stored sum compared with the sandbox truth exactly and
// the ledger with the rows. Each worker has a sandbox of its own (the same seed: the same data) so
// that its requests are told apart, and a database application_name of its own so that its
// transactions are.
import type postgres from "postgres";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { type ChildExit, type ChildRun, cliEnv, runCli, spawnCli } from "./child-sync.ts";
import { createTestDatabase } from "./db.ts";
import { type LedgerRow, ledgerRows, ledgerViolations } from "./ledger-checks.ts";
import { DAY, HOUR } from "./time.ts";
import { compareWithTruth } from "./truth-compare.ts";

export const NOW = Date.UTC(2026, 1, 20);
export const FROM = Date.UTC(2026, 1, 16);
export const TO = FROM + DAY;
/** The statistics backfilled (WORKER_KILL_STREAMS may name others of them, comma-separated). */
export const STREAMS: readonly string[] = process.env.WORKER_KILL_STREAMS?.split(",") ?? ["stat.transaction", "stat.sql"];
const WORKERS = 3;

/** Where a worker is killed: at its nth split request, write transaction or request since the kill before; `recovery`: at its nth write, then the worker that runs the dead one's job again, inside that job's first write. */
export type KillPoint = "split" | "write" | "requests" | "recovery";
export interface Kill {
  readonly point: KillPoint;
  readonly nth: number;
}

export interface KillFixture {
  readonly sandboxes: readonly Sandbox[];
  readonly pcodes: readonly number[];
  close(): Promise<void>;
}

/** One sandbox per worker slot, all of the same seed (their ground truth is the same). */
export async function startKillFixture(): Promise<KillFixture> {
  const sandboxes = await Promise.all(
    Array.from({ length: WORKERS }, () =>
      startSandbox({ now: () => NOW, seed: 7, projects: 1, maxRecords: 120, burstKeys: 200, latencyMs: [2, 25] }),
    ),
  );
  return {
    sandboxes,
    pcodes: sandboxes[0]!.projects.map((p) => p.pcode),
    close: async () => {
      await Promise.all(sandboxes.map((s) => s.stop()));
    },
  };
}

export interface KillOutcome {
  readonly kills: readonly Kill[];
  /** What was killed: `split #1: worker 0`, and the recovering one of a `recovery`. */
  readonly killed: string[];
  /** Everything that is not exact (empty: exact). */
  readonly problems: string[];
  /** Split requests (leaves below the hour) the workers sent: the kill points compare something. */
  readonly splitRequests: number;
  /** Ledger windows still cut at 5 minutes (the sandbox's burst cubes): left out of the comparison. */
  readonly truncated: number;
  /** Kill points the backfill finished before reaching (the rest of `kills` is not tried). */
  readonly unreached: string[];
}

/** Runs one backfill in a fresh database with `kills` in turn (a worker killed is replaced); never throws for what it finds. */
export async function runKillIteration(fx: KillFixture, kills: readonly Kill[], first = 0): Promise<KillOutcome> {
  const db = await createTestDatabase();
  for (const s of fx.sandboxes) s.clearLog();
  const crew = new Crew(fx, db.url);
  const out: KillOutcome = { kills, killed: [], problems: [], splitRequests: 0, truncated: 0, unreached: [] };
  try {
    const range = ["--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", STREAMS.join(",")];
    const queued = await runCli(["enqueue", "backfill", ...range, "--chunk", "6h"], crew.env(0, "enqueue"));
    if (queued.code !== 0) return { ...out, problems: [`enqueue exited ${queued.code}: ${queued.stderr.slice(-2000)}`] };
    for (let slot = 0; slot < WORKERS; slot++) crew.spawn(slot);
    for (const kill of kills) {
      const victims = await killOnce(crew, db.sql, kill, first);
      if (victims.length === 0) {
        out.unreached.push(`${kill.point} #${kill.nth}`);
        break;
      }
      out.killed.push(`${kill.point} #${kill.nth}: worker ${victims.join(" then ")}`);
    }
    for (const exit of await crew.exits())
      if (exit.code !== 0) out.problems.push(`a worker exited ${exit.code ?? exit.signal}: ${exit.stderr.slice(-1500)}`);
    out.problems.push(...(await inexact(fx, db.sql)));
    const splitRequests = fx.sandboxes.reduce((n, s) => n + s.requestLog.filter(isSplit).length, 0);
    const truncated = (await ledgerRows(db.sql, { status: "truncated" })).length;
    return { ...out, splitRequests, truncated };
  } finally {
    await crew.killAll();
    await db.drop();
  }
}

const isSplit = (e: { opId: string | null; stime: number | null; etime: number | null }) =>
  e.opId !== null && e.stime !== null && e.etime !== null && e.etime - e.stime < HOUR;

interface Member {
  readonly run: ChildRun;
  readonly slot: number;
  readonly app: string;
}

/** The worker processes: one per slot (its sandbox), a killed one replaced in its slot by a new one. */
class Crew {
  readonly members: Member[] = [];
  readonly #gone: Promise<ChildExit>[] = [];
  constructor(
    readonly fx: KillFixture,
    private readonly url: string,
  ) {}

  env(slot: number, app: string): Record<string, string> {
    return cliEnv({
      baseUrl: this.fx.sandboxes[slot]!.url,
      databaseUrl: `${this.url}?application_name=${app}`,
      projects: this.fx.sandboxes[slot]!.projects,
      extra: { APM_WORKER_RECOVERY: "2s", APM_WINDOW_CONCURRENCY: "3", APM_STREAMS: STREAMS.join(",") },
    });
  }

  spawn(slot: number): void {
    const app = `apm-kill-w${this.members.length + this.#gone.length}`;
    const run = spawnCli(["worker", "--until-idle", "--concurrency", "2"], this.env(slot, app), { timeoutMs: 150_000 });
    this.members.push({ run, slot, app });
  }

  live(): Member[] {
    return this.members.filter((m) => m.run.child.exitCode === null && m.run.child.signalCode === null);
  }

  /** Kills `m` with -9 and starts its replacement. */
  async kill(m: Member): Promise<void> {
    this.members.splice(this.members.indexOf(m), 1);
    this.#gone.push(m.run.kill("SIGKILL"));
    await this.#gone.at(-1);
    this.spawn(m.slot);
  }

  /** The exits of the workers not killed (they end by themselves once the queue is empty). */
  exits(): Promise<ChildExit[]> {
    return Promise.all(this.members.map((m) => m.run.exited));
  }

  async killAll(): Promise<void> {
    await Promise.all(this.members.map((m) => m.run.kill("SIGKILL")));
  }
}

/** Waits for `kill`'s point on some live worker and kills it (a `recovery`: then the one running its job again); returns the victims' numbers. */
async function killOnce(crew: Crew, sql: postgres.Sql, kill: Kill, first: number): Promise<string[]> {
  const base = crew.fx.sandboxes.map((s) => ({ requests: s.requestLog.length, splits: s.requestLog.filter(isSplit).length }));
  const writes = new WriteWatch(sql);
  const reached = async (m: Member): Promise<boolean> => {
    const log = crew.fx.sandboxes[m.slot]!.requestLog;
    if (kill.point === "split") return log.filter(isSplit).length - base[m.slot]!.splits >= kill.nth;
    if (kill.point === "requests") return log.length - base[m.slot]!.requests >= kill.nth;
    return (await writes.seen(m.app)) >= kill.nth;
  };
  const victim = await pollFor(crew, reached, first);
  if (victim === null) return [];
  const held = await jobsOf(sql, victim.run.pid);
  await crew.kill(victim);
  if (kill.point !== "recovery" || held.length === 0) return [victim.app];
  // The dead worker's job, once another worker runs it again: killed inside a write of that worker.
  const since = new WriteWatch(sql);
  const second = await pollFor(
    crew,
    async (m) => (await jobsOf(sql, m.run.pid)).some((k) => held.includes(k)) && (await since.seen(m.app)) >= 1,
    0,
  );
  if (second === null) return [victim.app];
  await crew.kill(second);
  return [victim.app, second.app];
}

/** The first live worker (slots from `from` on) for which `reached` holds (checked every few ms), or null once none is left. */
async function pollFor(crew: Crew, reached: (m: Member) => Promise<boolean>, from: number): Promise<Member | null> {
  for (;;) {
    const live = crew.live().sort((a, b) => ((a.slot - from + WORKERS) % WORKERS) - ((b.slot - from + WORKERS) % WORKERS));
    if (live.length === 0) return null;
    for (const m of live) if (await reached(m)) return m;
    await new Promise((r) => setTimeout(r, 3));
  }
}

/** Keys of the jobs locked by the worker process `pid`. */
async function jobsOf(sql: postgres.Sql, pid: number): Promise<string[]> {
  const rows = await sql<{ key: string }[]>`SELECT j.key FROM apm_queue.jobs j JOIN worker_heartbeats w ON w.worker_id = j.locked_by
    WHERE w.pid = ${pid} AND j.key IS NOT NULL`.catch(() => []);
  return rows.map((r) => r.key);
}

/** Write transactions of each worker seen so far (a transaction: backend and start, inside a write statement). */
class WriteWatch {
  readonly #seen = new Map<string, Set<string>>();
  constructor(private readonly sql: postgres.Sql) {}

  async seen(app: string): Promise<number> {
    const rows = await this.sql<{ app: string; tx: string }[]>`
      SELECT application_name AS app, pid::text || '/' || xact_start::text AS tx FROM pg_stat_activity
      WHERE datname = current_database() AND application_name LIKE 'apm-kill-w%' AND xact_start IS NOT NULL
        AND (query LIKE 'COPY "stat_%' OR query LIKE '%INTO "sync_windows"%' OR query LIKE 'DELETE FROM "stat_%')`;
    for (const r of rows) {
      const set = this.#seen.get(r.app) ?? new Set<string>();
      set.add(r.tx);
      this.#seen.set(r.app, set);
    }
    return this.#seen.get(app)?.size ?? 0;
  }
}

/** What differs from the ground truth, or breaks the ledger's word, after the survivors finished. */
async function inexact(fx: KillFixture, sql: postgres.Sql): Promise<string[]> {
  const out: string[] = [];
  const truth = fx.sandboxes[0]!.truth;
  const ledger = await ledgerRows(sql);
  for (const pcode of fx.pcodes)
    for (const op of STREAMS) {
      const { diff, truthKeys } = await compareWithTruth({ sql, truth }, op, pcode, FROM, TO);
      if (truthKeys === 0) out.push(`${op} ${pcode}: the truth has no keys (nothing compared)`);
      if (diff.length > 0)
        out.push(`${op} ${pcode}: ${diff.join("; ")}; hours short: ${(await shortHours(sql, truth, op, pcode)).join(", ")}`);
      out.push(...ledgerGaps(ledger, op, pcode));
      out.push(...(await rollupDiffs(sql, op, pcode)));
    }
  out.push(...(await ledgerViolations(sql, STREAMS, FROM)));
  const failed = ledger.filter((l) => l.status === "failed");
  if (failed.length > 0) out.push(`${failed.length} failed ledger window(s)`);
  const [refused] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM quarantine`;
  if (refused!.n > 0) out.push(`${refused!.n} record(s) quarantined`);
  const left = await sql<{ key: string; attempts: number; max: number; error: string | null }[]>`
    SELECT key, attempts, max_attempts AS max, last_error AS error FROM apm_queue.jobs`;
  for (const j of left) out.push(`job ${j.key} left in the queue: ${j.attempts}/${j.max} attempts, last error ${j.error}`);
  return out;
}

/** The ledger's done (or truncated) windows of a stream must tile [FROM, TO): no hole, no overlap. */
function ledgerGaps(ledger: readonly LedgerRow[], op: string, pcode: number): string[] {
  const rows = ledger.filter((l) => l.stream === op && l.pcode === pcode && l.status !== "failed");
  const out: string[] = [];
  let at = FROM;
  for (const l of rows) {
    if (l.start !== at)
      out.push(`${op} ${pcode}: ledger ${l.start < at ? "overlap" : "hole"} at ${new Date(Math.min(at, l.start)).toISOString()}`);
    at = Math.max(at, l.end);
  }
  if (at !== TO) out.push(`${op} ${pcode}: ledger ends at ${new Date(at).toISOString()}`);
  return out;
}

/** The statistics' hourly and daily views (their rollups) against the raw rows they sum, per key and bucket. */
async function rollupDiffs(sql: postgres.Sql, op: string, pcode: number): Promise<string[]> {
  const table = op.replace(".", "_");
  const keys = ROLLUP_KEYS[table]!.map((k) => `"${k}"`).join(", ");
  const out: string[] = [];
  for (const grain of ["hour", "day"] as const) {
    const view = `"${table}_${grain === "hour" ? "hourly" : "daily"}"`;
    const [row] = await sql.unsafe<{ n: number; sample: string | null }[]>(
      `WITH v AS (SELECT bucket_start AS b, ${keys}, sum("count")::bigint AS c FROM ${view}
                   WHERE pcode = $1 AND bucket_start >= $2 AND bucket_start < $3 GROUP BY 1, ${keys}),
            r AS (SELECT date_trunc('${grain}', window_start, 'UTC') AS b, ${keys}, sum("count")::bigint AS c FROM "${table}"
                   WHERE pcode = $1 AND window_start >= $2 AND window_start < $3 GROUP BY 1, ${keys}),
            d AS ((SELECT * FROM v EXCEPT SELECT * FROM r) UNION ALL (SELECT * FROM r EXCEPT SELECT * FROM v))
       SELECT count(*)::int AS n, min(b::text) AS sample FROM d`,
      [pcode, new Date(FROM), new Date(TO)],
    );
    if (row!.n > 0) out.push(`${op} ${pcode}: ${row!.n} ${grain} bucket(s) of ${view} differ from the raw rows (first at ${row!.sample})`);
  }
  return out;
}

/** The keys of each statistic's rollup views. */
const ROLLUP_KEYS: Readonly<Record<string, readonly string[]>> = {
  stat_transaction: ["service_hash"],
  stat_sql: ["sql_hash", "dbc_hash", "service_hash"],
  stat_httpc: ["url_hash", "host_hash", "port", "service_hash"],
  stat_error: ["class_hash", "msg_hash", "service_hash"],
  stat_remote: ["ip"],
};

/** Hours whose stored count differs from the truth (for the report of an inexact iteration). */
async function shortHours(sql: postgres.Sql, truth: Sandbox["truth"], op: string, pcode: number): Promise<string[]> {
  const out: string[] = [];
  for (let h = FROM; h < TO; h += HOUR) {
    const { diff } = await compareWithTruth({ sql, truth }, op, pcode, h, h + HOUR);
    if (diff.length > 0) out.push(new Date(h).toISOString().slice(11, 16));
  }
  return out;
}
