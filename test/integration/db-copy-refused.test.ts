// A value the database refuses inside a window's COPY fails that write at once, with the server's
// message and the table, line and column it names; the transaction rolls back and the connection
// serves the next write (issue 21: on Postgres the COPY never settled, the connection sat "idle in
// transaction (aborted)" and the run hung for ever). A COPY refused at its start, its data already
// sent behind it, the same. On both databases, each case bounded in time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableInfo } from "../../src/db/tables.ts";
import { CopyRefusedError, copyRows } from "../../src/db/write/copyRows.ts";
import { replaceWindowRows } from "../../src/db/write/rowSink.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { partitionsFor } from "../support/partitions.ts";

const H = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 10);
const COLS = ["service_hash", "service", "count", "extra"];
const good = (hash: number) => ({ service_hash: hash, service: `/s${hash}`, count: 1, extra: {} });
/** A refused COPY must settle well within this (it used to hang for ever). */
const BOUND_MS = 10_000;

const CASES = [
  // A NUL in a value the writer leaves to the server (a number sent as text).
  { kind: "encoding", row: { ...good(2), count: "7\u0000" }, code: "22021" },
  { kind: "out of range", row: { ...good(2), count: "99999999999999999999" }, code: "22003", column: "count" },
  { kind: "NOT NULL", row: { ...good(2), extra: null }, code: "23502" },
  { kind: "type", row: { ...good(2), count: "abc" }, code: "22P02", column: "count" },
] as const;

function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe.each(DATABASES)("a COPY the database refuses, on %s", (kind) => {
  let t: OpenedDatabase;
  beforeAll(async () => {
    t = await openTestDatabase(kind);
  });
  afterAll(async () => {
    await t?.drop();
  });

  const write = async (pcode: number, rows: readonly Record<string, unknown>[]) => {
    await partitionsFor(t.sql, "stat_transaction", [], T0);
    return t.sql.begin((tx) => replaceWindowRows(tx, "stat_transaction", COLS, pcode, T0, T0 + H, rows));
  };
  const stored = async (pcode: number) =>
    (await t.sql<{ h: number }[]>`select service_hash::int as h from stat_transaction where pcode = ${pcode} order by 1`).map((r) => r.h);

  it.each(CASES)("$kind: fails the write at once, rolls back, and the connection writes again", async (c) => {
    const pcode = 100 + CASES.indexOf(c);
    await write(pcode, [good(1)]);
    const started = Date.now();
    const error = await within(
      BOUND_MS,
      write(pcode, [good(3), c.row, good(4)]).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    expect(error).toBeInstanceOf(CopyRefusedError);
    const refused = error as CopyRefusedError;
    expect(refused.code).toBe(c.code);
    expect(refused.message).toMatch(/^stat_transaction: the database refused a value: /);
    expect(refused.message).toContain("COPY stat_transaction, line 2");
    if ("column" in c) expect(refused.message).toContain(`column ${c.column}`);
    // Rolled back: the window's delete did not happen, the rows before the bad one are not there.
    expect(await stored(pcode)).toEqual([1]);
    // The same pool writes again at once.
    await within(BOUND_MS, write(pcode, [good(5)]));
    expect(await stored(pcode)).toEqual([5]);
  });

  it("a COPY refused at its start: the data sent behind it is ignored, the server's error, the connection writes again", async () => {
    // The statement, its data and its end leave in one write, without waiting for the server to
    // take the COPY: when it refuses the statement itself, the server skips the data it did not ask for.
    const pcode = 200;
    const rows = [good(6), good(7)];
    const error = await within(
      BOUND_MS,
      t.sql
        .begin((tx) => copyRows(tx, tableInfo("stat_transaction"), COLS, rows, { table: '"no_such_table"' }))
        .then(
          () => null,
          (e: unknown) => e,
        ),
    );
    expect(error).not.toBeInstanceOf(CopyRefusedError);
    expect((error as { code?: string }).code).toBe("42P01");
    expect(String(error)).toMatch(/no_such_table/);
    await within(BOUND_MS, write(pcode, rows));
    expect(await stored(pcode)).toEqual([6, 7]);
    expect(await t.sql`select 1 as ok`).toEqual([{ ok: 1 }]);
  });

  it("leaves no connection in an aborted transaction", async () => {
    if (kind === "embedded") {
      // One session: a new transaction starts clean (it would fail with 25P02 otherwise).
      expect(await t.sql.begin((tx) => tx`select 1 as ok`)).toEqual([{ ok: 1 }]);
      return;
    }
    const stuck = await t.sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state like 'idle in transaction%'`;
    expect(stuck).toEqual([{ n: 0 }]);
  });
});
