// A value the database refuses in a window's COPY (issue 21): the run does not hang; that window
// fails at once with the server's message and is recorded `failed`, the other windows are
// written, the run exits 1; the next run writes the window. On both databases. The refusal comes
// from a CHECK constraint on one hour's rows (the kinds of refused value are in db-copy-refused).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { compareWithTruth, ledgerRows, runEngine } from "../support/engine-harness.ts";

const H = 3_600_000;
const NOW = Date.UTC(2026, 0, 10);
const FROM = Date.UTC(2026, 0, 7);
const TO = FROM + 6 * H;
const REFUSED_HOUR = FROM + 3 * H;
const STREAM = "stat.transaction";
/** The whole run, refused window included, must end within this (it used to hang for ever). */
const BOUND_MS = 60_000;

describe.each(DATABASES)("a refused value in a window's COPY, on %s", (kind) => {
  let t: OpenedDatabase;
  let sb: Sandbox;
  beforeAll(async () => {
    [t, sb] = await Promise.all([openTestDatabase(kind), startSandbox({ now: () => NOW, seed: 3, projects: 1, burstKeys: 0 })]);
  });
  afterAll(async () => {
    await sb?.stop();
    await t?.drop();
  });

  const backfill = (logs: string[] = []) =>
    runEngine(
      { baseUrl: sb.url, projects: sb.projects, database: t, now: () => NOW, logs, env: { APM_START: new Date(FROM).toISOString() } },
      { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: [STREAM] },
    );

  it("fails that window at once, records it failed with the server's message, and the next run writes it", async () => {
    const pcode = sb.projects[0]!.pcode;
    const hour = new Date(REFUSED_HOUR).toISOString();
    await t.sql.unsafe(`ALTER TABLE stat_transaction ADD CONSTRAINT refuse_one_hour CHECK (window_start <> '${hour}')`);
    const logs: string[] = [];
    const started = Date.now();
    const first = await backfill(logs);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(first.exitCode).toBe(1);
    expect(first.streams.get(STREAM)).toMatchObject({ windows: 6, failed: 1 });
    const failed = await t.sql<{ start: Date; error: string }[]>`
      select window_start as start, error from sync_windows where stream = ${STREAM} and status = 'failed'`;
    expect(failed.map((f) => f.start.getTime())).toEqual([REFUSED_HOUR]);
    expect(failed[0]!.error).toMatch(
      /^stat_transaction: the database refused a value: .*refuse_one_hour.*\(COPY stat_transaction, line 1.*\(23514\)$/,
    );
    const line = logs.find((l) => l.includes(" failed: "));
    expect(line).toContain(`${STREAM} pcode=${pcode}: window ${hour}..`);
    expect(line).toContain("refuse_one_hour");
    expect((await ledgerRows(t.sql, { stream: STREAM, status: "done" })).length).toBe(5);

    await t.sql.unsafe("ALTER TABLE stat_transaction DROP CONSTRAINT refuse_one_hour");
    const second = await backfill();
    expect(second.exitCode).toBe(0);
    expect(await ledgerRows(t.sql, { stream: STREAM, status: "failed" })).toEqual([]);
    expect((await compareWithTruth({ sql: t.sql, truth: sb.truth }, STREAM, pcode, FROM, TO)).diff).toEqual([]);
  });
});
