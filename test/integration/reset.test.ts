// `apm-sync reset` against a warehouse backfilled from the sandbox: the dry run changes nothing;
// reset of one stream and project over a range forgets exactly its windows (and with --drop-rows
// their rows, before any refetch), moves its watermark back, touches nothing else; then a `sync`
// and a queued backfill request exactly those windows again (the sandbox's request log) and the
// ground truth holds.
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withAdvisoryLock } from "../../src/db/driver/withAdvisoryLock.ts";
import { cliEnv, runCli } from "../support/child-sync.ts";
import {
  compareWithTruth,
  DAY,
  type EngineHarness,
  HOUR,
  ledgerRows,
  ledgerViolations,
  MINUTE,
  startEngineHarness,
  tableChecksum,
  watermarkRows,
} from "../support/engine-harness.ts";
import { takeOnce } from "../support/lock.ts";
import { coverageDiffs, rollupDiffs } from "../support/rollup-checks.ts";

const TO = Date.UTC(2026, 1, 18);
const FROM = TO - 2 * DAY;
// The incremental horizon (now - 10 min settle) is TO: a sync finds nothing new, only holes.
const NOW = TO + 10 * MINUTE;
const STREAMS = ["stat.transaction", "stat.sql", "range.sql"];
const TABLES = ["stat_transaction", "stat_sql", "range_sql"];
const iso = (ms: number) => new Date(ms).toISOString();

/** Everything except one slice (stream, pcode): its ledger, watermarks and table rows, as comparable text. */
async function allBut(sql: postgres.Sql, stream: string, table: string, pcode: number): Promise<Record<string, string>> {
  const [ledger] = await sql<{ s: string }[]>`
    SELECT md5(string_agg(to_jsonb(l)::text, E'\n' ORDER BY l.id)) AS s FROM sync_windows l WHERE NOT (stream = ${stream} AND pcode = ${pcode})`;
  const [marks] = await sql<{ s: string }[]>`
    SELECT md5(string_agg(to_jsonb(w)::text, E'\n' ORDER BY w.stream, w.pcode)) AS s FROM watermarks w WHERE NOT (stream = ${stream} AND pcode = ${pcode})`;
  const out: Record<string, string> = { ledger: ledger!.s, watermarks: marks!.s };
  for (const t of TABLES.filter((x) => x !== table)) out[t] = await tableChecksum(sql, t);
  const [rows] = await sql.unsafe<{ s: string }[]>(
    `SELECT md5(string_agg(to_jsonb(t)::text, E'\\n' ORDER BY to_jsonb(t)::text)) AS s FROM "${table}" t WHERE pcode <> $1`,
    [pcode],
  );
  out[`${table} of other projects`] = rows!.s;
  return out;
}

async function rowsIn(sql: postgres.Sql, table: string, pcode: number, from: number, to: number): Promise<number> {
  const [row] = await sql.unsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM "${table}" WHERE pcode = $1 AND window_start >= $2 AND window_end <= $3`,
    [pcode, new Date(from), new Date(to)],
  );
  return row!.n;
}

/** Hours [from, to) as `op pcode start..end` lines, the form the request log is compared in. */
function hours(op: string, pcode: number, from: number, to: number): string[] {
  const out: string[] = [];
  for (let t = from; t < to; t += HOUR) out.push(`${op} ${pcode} ${iso(t)}..${iso(t + HOUR)}`);
  return out;
}

describe("reset", () => {
  let h: EngineHarness;
  let env: Record<string, string>;
  let p1: number;
  let p2: number;
  const requested = () =>
    h.sandbox.requestLog
      .filter((e) => e.opId !== null && e.stime !== null && e.etime !== null)
      .map((e) => `${e.opId} ${e.pcode} ${iso(e.stime!)}..${iso(e.etime!)}`)
      .sort();
  /** The holes `status --json` names. */
  const statusHoles = async (e: Record<string, string>) => {
    const run = await runCli(["status", "--json"], e);
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { holes: Record<string, unknown>[] }).holes;
  };
  const groundTruth = async () => {
    expect(await ledgerViolations(h.sql, STREAMS, FROM)).toEqual([]);
    for (const op of STREAMS)
      for (const pcode of h.pcodes) {
        const { diff, truthKeys } = await compareWithTruth(h, op, pcode, FROM, TO);
        expect({ op, pcode, diff }).toEqual({ op, pcode, diff: [] });
        expect(truthKeys).toBeGreaterThan(0);
      }
  };

  beforeAll(async () => {
    h = await startEngineHarness({ now: NOW, burstKeys: 0, projects: 2 });
    [p1, p2] = h.pcodes as [number, number];
    env = cliEnv({
      baseUrl: h.sandbox.url,
      databaseUrl: h.db.url,
      projects: h.sandbox.projects,
      extra: { APM_START: iso(FROM), APM_LOOKBACK: "0" },
    });
    const r = await runCli(["backfill", "--from", iso(FROM), "--to", iso(TO), "--streams", STREAMS.join(",")], env);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  });
  afterAll(() => h?.close());

  it("usage problems exit 2 and change nothing", async () => {
    const before = await allBut(h.sql, "", "stat_sql", 0);
    for (const [args, says] of [
      [["reset"], "--streams: name the streams to reset"],
      [["reset", "--streams", "stat.nope"], 'unknown stream "stat.nope"'],
      [["reset", "--streams", "stat.sql", "--from", iso(TO), "--to", iso(FROM)], "--to must be after --from"],
      [["reset", "--streams", "visitors.h", "--drop-rows"], "--drop-rows deletes the rows of windowed aggregates"],
    ] as const) {
      const r = await runCli(args, env);
      expect({ args, code: r.code, err: r.stderr }).toEqual({ args, code: 2, err: expect.stringContaining(says) });
    }
    expect(await allBut(h.sql, "", "stat_sql", 0)).toEqual(before);
  });

  it("a stream another run is writing is skipped (its lock), exit 1, nothing of it forgotten", async () => {
    const before = await allBut(h.sql, "", "stat_sql", 0);
    const held = await withAdvisoryLock(
      h.db,
      "stat.sql",
      p1,
      () => runCli(["reset", "--streams", "stat.sql", "--projects", String(p1), "--drop-rows"], env),
      takeOnce,
    );
    expect(held.acquired).toBe(true);
    const r = held.acquired ? held.value : null;
    expect(r?.code, r?.stderr).toBe(1);
    expect(r?.stdout).toContain(`stat.sql pcode=${p1}: skipped: another run is writing this stream now`);
    expect(await allBut(h.sql, "", "stat_sql", 0)).toEqual(before);
  });

  it("--dry-run prints what it would forget and changes nothing", async () => {
    const before = await allBut(h.sql, "", "stat_sql", 0);
    const args = [
      "reset",
      "--streams",
      "stat.sql",
      "--projects",
      String(p1),
      "--from",
      iso(FROM + 10.5 * HOUR),
      "--to",
      iso(FROM + 16 * HOUR),
    ];
    const r = await runCli([...args, "--dry-run", "--drop-rows"], env);
    expect(r.code, r.stderr).toBe(0);
    // It says how many rows --drop-rows would delete: those of the whole windows the range touches.
    const rows = await rowsIn(h.sql, "stat_sql", p1, FROM + 10 * HOUR, FROM + 16 * HOUR);
    expect(rows).toBeGreaterThan(0);
    expect(r.stdout).toContain(
      `stat.sql pcode=${p1}: would forget 6 window(s) ${iso(FROM + 10 * HOUR)} .. ${iso(FROM + 16 * HOUR)} (6 done); watermark ${iso(TO)} -> ${iso(FROM + 10 * HOUR)}; ${rows} row(s) would be deleted\n`,
    );
    expect(r.stdout).toContain("reset (dry run: nothing changed): would forget 6 window(s) of 1 stream slice(s)");
    expect(await allBut(h.sql, "", "stat_sql", 0)).toEqual(before);
  });

  it("--drop-rows: the range's windows and rows go at once, the watermark moves back, nothing else changes; sync refetches exactly them", async () => {
    const [a, b] = [FROM + 10 * HOUR, FROM + 16 * HOUR];
    const others = await allBut(h.sql, "stat.sql", "stat_sql", p1);
    const inRange = await rowsIn(h.sql, "stat_sql", p1, a, b);
    expect(inRange).toBeGreaterThan(0);
    const r = await runCli(
      ["reset", "--streams", "stat.sql", "--projects", String(p1), "--from", iso(a + 30 * MINUTE), "--to", iso(b), "--drop-rows"],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `stat.sql pcode=${p1}: forgot 6 window(s) ${iso(a)} .. ${iso(b)} (6 done); watermark ${iso(TO)} -> ${iso(a)}; ${inRange} row(s) deleted`,
    );
    // Before any refetch: no row and no ledger window of the range, the watermark at its start.
    expect(await rowsIn(h.sql, "stat_sql", p1, a, b)).toBe(0);
    expect(await rowsIn(h.sql, "stat_sql", p1, FROM, TO)).toBeGreaterThan(0);
    const ledger = (await ledgerRows(h.sql, { stream: "stat.sql" })).filter((l) => l.pcode === p1);
    expect(ledger.filter((l) => l.end > a && l.start < b)).toEqual([]);
    expect(ledger.length).toBe(48 - 6);
    expect((await watermarkRows(h.sql, "stat.sql")).find((w) => w.pcode === p1)?.watermark).toBe(a);
    expect(await allBut(h.sql, "stat.sql", "stat_sql", p1)).toEqual(others);
    // The rollups lost the range's rows and coverage with them, in the same transaction.
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await coverageDiffs(h.sql)).toEqual([]);
    const [gone] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM stat_sql_hourly WHERE pcode = ${p1} AND bucket_start >= ${new Date(a)} AND bucket_start < ${new Date(b)}`;
    expect(gone!.n).toBe(0);

    h.sandbox.clearLog();
    const sync = await runCli(["sync", "--streams", STREAMS.join(",")], env);
    expect(sync.code, sync.stderr.slice(-2000)).toBe(0);
    expect(requested()).toEqual(hours("stat.sql", p1, a, b));
    expect((await watermarkRows(h.sql, "stat.sql")).find((w) => w.pcode === p1)?.watermark).toBe(TO);
    await groundTruth();
    expect(await rollupDiffs(h.sql)).toEqual([]);
  });

  it("without --drop-rows the rows stay until the refetch; a queued backfill requests exactly the forgotten windows", async () => {
    const [c, d] = [FROM + 30 * HOUR, FROM + 33 * HOUR];
    const rows = await rowsIn(h.sql, "stat_transaction", p2, c, d);
    const r = await runCli(["reset", "--streams", "stat.transaction", "--projects", String(p2), "--from", iso(c), "--to", iso(d)], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `stat.transaction pcode=${p2}: forgot 3 window(s) ${iso(c)} .. ${iso(d)} (3 done); watermark ${iso(TO)} -> ${iso(c)}\n`,
    );
    expect(await rowsIn(h.sql, "stat_transaction", p2, c, d)).toBe(rows);
    // The rows stay in the rollups; the forgotten hours are no longer covered.
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await coverageDiffs(h.sql)).toEqual([]);
    const [uncovered] = await h.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM stat_transaction_hourly WHERE pcode = ${p2} AND bucket_start >= ${new Date(c)} AND bucket_start < ${new Date(d)} AND coverage = 0`;
    expect(uncovered!.n).toBeGreaterThan(0);

    h.sandbox.clearLog();
    const range = ["--from", iso(FROM), "--to", iso(TO), "--streams", STREAMS.join(","), "--chunk", "1h"];
    const queued = await runCli(["enqueue", "backfill", ...range], env);
    expect(queued.stdout, queued.stderr).toContain("enqueue backfill: 3 job(s) added, 0 already queued");
    const worker = await runCli(["worker", "--until-idle"], env, { timeoutMs: 120_000 });
    expect(worker.code, worker.stderr.slice(-2000)).toBe(0);
    expect(requested()).toEqual(hours("stat.transaction", p2, c, d));
    expect(await rowsIn(h.sql, "stat_transaction", p2, c, d)).toBe(rows);
    await groundTruth();
  });

  it("a range before now - APM_START: status names the holes, the next sync fetches exactly them, the data ends exact", async () => {
    // The first day of the history now lies before APM_START.
    const later = { ...env, APM_START: iso(FROM + DAY) };
    const [a, b] = [FROM + 6 * HOUR, FROM + 30 * HOUR];
    const r = await runCli(
      ["reset", "--streams", "stat", "--projects", String(p1), "--from", iso(a), "--to", iso(b), "--drop-rows"],
      later,
    );
    expect(r.code, r.stderr).toBe(0);
    for (const op of ["stat.sql", "stat.transaction"])
      expect(r.stdout).toContain(`${op} pcode=${p1}: forgot 24 window(s) ${iso(a)} .. ${iso(b)}`);
    const hole = (stream: string) => ({ pcode: p1, stream, partition: "", start: iso(a), end: iso(b) });
    expect(await statusHoles(later)).toEqual([hole("stat.sql"), hole("stat.transaction")]);
    const text = await runCli(["status"], later);
    expect(text.stdout).toContain(
      "holes in the ledger: 2 (time no window covers between a stream's first and last window; the next sync fetches them):",
    );
    const at = (ms: number) => `${iso(ms).slice(0, 16).replace("T", " ")}Z`;
    expect(text.stdout).toContain(`  project ${p1} stat.sql: ${at(a)} .. ${at(b)}\n`);

    h.sandbox.clearLog();
    const sync = await runCli(["sync", "--streams", STREAMS.join(",")], later);
    expect(sync.code, sync.stderr.slice(-2000)).toBe(0);
    expect(requested()).toEqual([...hours("stat.sql", p1, a, b), ...hours("stat.transaction", p1, a, b)].sort());
    expect(sync.stderr).toContain(
      `stat.sql pcode=${p1}: 18 window(s) in ${iso(a)}..${iso(FROM + DAY)}, before APM_START, fill holes in the ledger`,
    );
    for (const op of ["stat.sql", "stat.transaction"])
      expect((await watermarkRows(h.sql, op)).find((w) => w.pcode === p1)?.watermark).toBe(TO);
    expect(await statusHoles(later)).toEqual([]);
    await groundTruth();
    expect(await rollupDiffs(h.sql)).toEqual([]);
    expect(await coverageDiffs(h.sql)).toEqual([]);
  });

  it("refuses to leave a hole before the retention's start (nothing fetches it again), changing nothing", async () => {
    const before = await allBut(h.sql, "", "stat_sql", 0);
    // 30 days before the real clock: the whole history of the test lies before it.
    const kept = { ...env, APM_RETENTION: "stat=30d" };
    const r = await runCli(
      ["reset", "--streams", "stat.sql", "--projects", String(p1), "--from", iso(FROM), "--to", iso(FROM + 2 * HOUR)],
      kept,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `stat\\.sql pcode=${p1}: 2 window\\(s\\) before (\\d{4}-\\d\\d-\\d\\d), where its retention starts \\(APM_RETENTION stat=30d\\): .*reset from \\1 on \\(--from \\1\\)`,
      ),
    );
    expect(await allBut(h.sql, "", "stat_sql", 0)).toEqual(before);
  });
});
