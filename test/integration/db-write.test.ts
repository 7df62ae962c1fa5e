// The write verbs on both databases, each opened by production's openDatabase: the same code
// path (COPY FROM STDIN, then one SQL verb) must leave the same rows on a Postgres server and on
// the embedded PGlite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TxHandle } from "../../src/db/driver/exec.ts";
import type { Scope } from "../../src/db/sqlText.ts";
import type { Row } from "../../src/db/write/row.ts";
import { openRowSink, replaceWindowRows, upsertRows } from "../../src/db/write/rowSink.ts";
import { softDeleteMissing } from "../../src/db/write/softDeleteMissing.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase, serverKind } from "../support/databases.ts";
import { partitionsFor } from "../support/partitions.ts";

const H = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 10);

const txRow = (serviceHash: number, count: number) => ({
  service_hash: serviceHash,
  service: `/s${serviceHash}`,
  count,
  time_sum: count * 10,
});
const TX_COLS = ["service_hash", "service", "count", "time_sum", "run_id"];

describe.each(DATABASES)("write verbs on %s", (kind) => {
  let t: OpenedDatabase;
  const statements: string[] = [];
  beforeAll(async () => {
    t = await openTestDatabase(kind, { debug: (_c, query) => statements.push(query) });
  });
  afterAll(async () => {
    await t?.drop();
  });

  const sums = async (pcode: number) =>
    t.sql<{ rows: number; count: string | null }[]>`
      select count(*)::int as rows, sum(count)::text as count from stat_transaction where pcode = ${pcode}`;
  // As the write path: the partitions first, then the window's transaction.
  const replace = async (...args: Parameters<typeof replaceWindowRows> extends [unknown, ...infer R] ? R : never) => {
    await partitionsFor(t.sql, String(args[0]), args[5], args[3]);
    return t.sql.begin((tx) => replaceWindowRows(tx, ...args));
  };

  it("runs on the database openDatabase selected", async () => {
    expect(await serverKind(t)).toBe(kind);
  });

  describe("replaceWindowRows", () => {
    it("replacing a window twice leaves one copy, and other windows and projects alone", async () => {
      const rows = [txRow(-5, 3), txRow(7, 4)].map((r) => ({ ...r, run_id: 1 }));
      await replace("stat_transaction", TX_COLS, 1, T0 + H, T0 + 2 * H, [txRow(1, 100)]);
      await replace("stat_transaction", TX_COLS, 2, T0, T0 + H, [txRow(1, 1000)]);
      expect(await replace("stat_transaction", TX_COLS, 1, T0, T0 + H, rows)).toEqual({ deleted: 0, inserted: 2, replaced: 0 });
      expect(await replace("stat_transaction", TX_COLS, 1, new Date(T0), new Date(T0 + H), rows)).toEqual({
        deleted: 2,
        inserted: 2,
        replaced: 0,
      });
      expect(await sums(1)).toEqual([{ rows: 3, count: "107" }]);
      expect(await sums(2)).toEqual([{ rows: 1, count: "1000" }]);
    });

    it("pipelined with the statements before it: the window's delete runs before its COPY", async () => {
      const rows = [txRow(-5, 3), txRow(7, 4)].map((r) => ({ ...r, run_id: 1 }));
      for (const round of [0, 1]) {
        await partitionsFor(t.sql, "stat_transaction", [], T0);
        const [, result] = await t.sql.begin((tx) =>
          Promise.all([tx`select 1`.execute(), replaceWindowRows(tx, "stat_transaction", TX_COLS, 90, T0, T0 + H, rows)]),
        );
        expect(result).toEqual({ deleted: round === 0 ? 0 : 2, inserted: 2, replaced: 0 });
      }
      expect(await sums(90)).toEqual([{ rows: 2, count: "7" }]);
    });

    it("re-fetching a grain window replaces the sub-windows of an earlier split", async () => {
      const p = 3;
      await replace("stat_transaction", TX_COLS, p, T0, T0 + H / 2, [txRow(1, 1)]);
      await replace("stat_transaction", TX_COLS, p, T0 + H / 2, T0 + H, [txRow(1, 2)]);
      // A split written in one go: rows carry their own sub-window.
      const cols = ["window_start", "window_end", ...TX_COLS];
      const split = [
        { window_start: T0, window_end: T0 + H / 4, ...txRow(1, 5) },
        { window_start: new Date(T0 + H / 4), window_end: new Date(T0 + H), ...txRow(1, 6) },
      ];
      expect(await replace("stat_transaction", cols, p, T0, T0 + H, split)).toEqual({ deleted: 2, inserted: 2, replaced: 0 });
      const got = await t.sql<{ ws: Date; we: Date; count: string }[]>`
        select window_start as ws, window_end as we, count::text from stat_transaction where pcode = ${p} order by 1`;
      expect(got.map((g) => [g.ws.getTime(), g.we.getTime(), g.count])).toEqual([
        [T0, T0 + H / 4, "5"],
        [T0 + H / 4, T0 + H, "6"],
      ]);
      await expect(
        replace("stat_transaction", cols, p, T0, T0 + H / 2, [{ window_start: T0, window_end: T0 + H, ...txRow(1, 1) }]),
      ).rejects.toThrow(/not inside/);
    });

    it("limits deletion to the extra scope (heap use avg and max share a table)", async () => {
      const cols = ["oid", "heap_use"];
      await replace("heap_use", cols, 4, T0, T0 + H, [{ oid: -1143239575, heap_use: 1.5 }], { time_merge: "avg" });
      await replace("heap_use", cols, 4, T0, T0 + H, [{ oid: -1143239575, heap_use: 9 }], { time_merge: "max" });
      await replace("heap_use", cols, 4, T0, T0 + H, [{ oid: -1143239575, heap_use: 2.5 }], { time_merge: "avg" });
      const got = await t.sql`select time_merge, oid::text, heap_use from heap_use where pcode = 4 order by 1`;
      expect(got.map((r) => [r.time_merge, r.oid, r.heap_use])).toEqual([
        ["avg", "-1143239575", 2.5],
        ["max", "-1143239575", 9],
      ]);
    });

    it("writes 10,000 rows with one DELETE and one binary COPY, keeping bigint, arrays and extra exact", async () => {
      const rows = Array.from({ length: 10_000 }, (_, i) => ({
        time: T0 + (i % 12) * 300_000,
        class_hash: i - 5000,
        service_hash: 2 ** 31 - 1 - i,
        count: i,
        msg: i === 0 ? 'quote " backslash \\ and \u00e9' : null,
        oids: [-1459620666, i],
        snap_seq: 6068699991557528332n + BigInt(i),
        extra: i === 0 ? { unknownField: "kept", nested: { n: 1 } } : {},
      }));
      const cols = ["time", "class_hash", "service_hash", "count", "msg", "oids", "snap_seq", "extra"];
      await partitionsFor(t.sql, "range_exceptions", [], T0);
      const before = statements.length;
      const r = await replace("range_exceptions", cols, 5, T0, T0 + H, rows);
      const used = statements.slice(before).filter((q) => !/^(begin|commit)/i.test(q.trim()));
      expect(r.inserted).toBe(10_000);
      expect(used.map((q) => q.replace(/\(.*?\) FROM/, "(..) FROM"))).toEqual([
        expect.stringMatching(/^DELETE FROM "range_exceptions" WHERE/),
        'COPY "range_exceptions" (..) FROM STDIN WITH (FORMAT binary)',
      ]);
      const [agg] = await t.sql`
        select count(*)::int as n, sum(count)::text as total, max(snap_seq)::text as max_seq, min(class_hash)::int as min_hash
        from range_exceptions where pcode = 5`;
      expect(agg).toEqual({
        n: 10_000,
        total: String((9999 * 10_000) / 2),
        max_seq: (6068699991557528332n + 9999n).toString(),
        min_hash: -5000,
      });
      const [first] = await t.sql`select msg, oids::text, extra, time from range_exceptions where pcode = 5 and count = 0`;
      expect(first?.msg).toBe('quote " backslash \\ and \u00e9');
      expect(first?.oids).toBe("{-1459620666,0}");
      expect(first?.extra).toEqual({ unknownField: "kept", nested: { n: 1 } });
      expect((first!.time as Date).getTime()).toBe(T0);
    });
  });

  describe("upsertRows and softDeleteMissing", () => {
    const cols = ["pcode", "oname", "host_ip", "active", "run_id"];
    const key = ["pcode", "oname"];
    const upsert = async (...args: Parameters<typeof upsertRows> extends [unknown, ...infer R] ? R : never) => {
      await partitionsFor(t.sql, String(args[0]), args[3]);
      return t.sql.begin((tx) => upsertRows(tx, ...args));
    };
    // A complete list as the snapshot write has it: upserted (staged), then the rest marked deleted.
    const listed = async (tx: TxHandle, table: string, scope: Scope, key: string[], rows: Row[], runId: number) => {
      const columns = rows.length > 0 ? Object.keys(rows[0]!) : key.filter((k) => !(k in scope));
      const sink = openRowSink(tx, table, columns, { kind: "upsert", key, constants: scope });
      if (rows.length > 0) await sink.write(rows);
      const { staged } = await sink.finish();
      return softDeleteMissing(tx, table, scope, key, staged, runId);
    };
    const softDelete = (table: string, scope: Scope, key: string[], rows: Row[], runId: number) =>
      t.sql.begin((tx) => listed(tx, table, scope, key, rows, runId));
    const live = async () =>
      (
        await t.sql<{ oname: string; active: boolean; deleted: boolean }[]>`
        select oname, active, deleted_at is not null as deleted from agents where pcode = 9 order by oname`
      ).map((r) => [r.oname, r.active, r.deleted]);

    it("inserts, updates by key, marks the missing as deleted and un-marks them when they return", async () => {
      await upsert("agents", cols, key, [
        { pcode: 9, oname: "a", host_ip: "10.0.0.1", active: true, run_id: 1 },
        { pcode: 9, oname: "b", active: true, run_id: 1 },
      ]);
      await upsert("agents", cols, key, [{ pcode: 10, oname: "a", active: true, run_id: 1 }]);
      // Second run: b changed, a disappeared; the same key twice in one batch keeps the last.
      // Rows as the parser gives them: no pcode, which comes from the request (a constant).
      const present = [
        { oname: "b", active: true, run_id: 2 },
        { oname: "b", active: false, run_id: 2 },
      ];
      await t.sql.begin(async (tx) => {
        expect(await upsertRows(tx, "agents", ["oname", "active", "run_id"], key, present, { pcode: 9 })).toEqual({
          written: 1,
          replaced: 0,
        });
      });
      expect(await softDelete("agents", { pcode: 9 }, key, present, 2)).toBe(1);
      expect(await live()).toEqual([
        ["a", true, true],
        ["b", false, false],
      ]);
      // Marking again changes nothing; other projects are untouched.
      expect(await softDelete("agents", { pcode: 9 }, key, present, 3)).toBe(0);
      const [other] = await t.sql`select deleted_at from agents where pcode = 10`;
      expect(other?.deleted_at).toBeNull();
      await upsert("agents", cols, key, [{ pcode: 9, oname: "a", active: true, run_id: 4 }]);
      expect(await live()).toEqual([
        ["a", true, false],
        ["b", false, false],
      ]);
      const [a] = await t.sql`select first_seen_at < last_seen_at as moved, run_id::int from agents where pcode = 9 and oname = 'a'`;
      expect(a).toEqual({ moved: true, run_id: 4 });
      // An empty complete list: every row of the scope is gone.
      expect(await softDelete("agents", { pcode: 9 }, key, [], 5)).toBe(2);
    });

    it("soft-deletes the one row of a scope-keyed dimension only when the list is empty", async () => {
      await upsert("project_details", ["name"], ["pcode"], [{ name: "demo" }], { pcode: 12 });
      expect(await softDelete("project_details", { pcode: 12 }, ["pcode"], [{ name: "demo" }], 5)).toBe(0);
      expect(await softDelete("project_details", { pcode: 12 }, ["pcode"], [], 5)).toBe(1);
      const [row] = await t.sql`select name, run_id::int, deleted_at is not null as deleted from project_details where pcode = 12`;
      expect(row).toEqual({ name: "demo", run_id: 5, deleted: true });
    });

    it("keeps averaged metric series apart from per-agent ones through constants (sentinel oid 0)", async () => {
      const mkey = ["pcode", "metric", "series_form", "oid", "ts"];
      const ts = [T0, T0 + 300_000];
      const agent = ts.map((x, i) => ({ metric: "tps", oid: 0, oname: "agent-zero", ts: x, value: i }));
      await upsert("metric_points", ["metric", "oid", "oname", "ts", "value"], mkey, agent, { pcode: 9, series_form: "agent" });
      const avg = ts.map((x, i) => ({ metric: "tps", ts: x, value: 10 + i }));
      await upsert("metric_points", ["metric", "ts", "value"], mkey, avg, { pcode: 9, series_form: "avg", oid: 0 });
      await upsert("metric_points", ["metric", "ts", "value"], mkey, [{ metric: "tps", ts: T0, value: 99 }], {
        pcode: 9,
        series_form: "avg",
        oid: 0,
      });
      const got = await t.sql`select series_form, oid::int, value from metric_points where pcode = 9 order by series_form, ts`;
      expect(got.map((r) => [r.series_form, r.oid, r.value])).toEqual([
        ["agent", 0, 0],
        ["agent", 0, 1],
        ["avg", 0, 99],
        ["avg", 0, 11],
      ]);
    });

    it("leaves unchanged points untouched and updates changed ones, through a staged COPY", async () => {
      const vcols = ["pcode", "granularity", "ts", "count", "run_id"];
      const vkey = ["pcode", "granularity", "ts"];
      const pts = [0, 1, 2].map((i) => ({ pcode: 9, granularity: "5m", ts: T0 + i * 300_000, count: i, run_id: 1 }));
      expect((await upsert("visitors", vcols, vkey, pts)).written).toBe(3);
      const again = pts.map((p) => ({ ...p, run_id: 2, count: p.count === 2 ? 20 : p.count }));
      const before = statements.length;
      expect((await upsert("visitors", vcols, vkey, again)).written).toBe(1);
      const used = statements.slice(before).map((q) => q.trim().split(/\s+/).slice(0, 3).join(" "));
      expect(used.filter((q) => !/^(begin|commit)/i.test(q))).toEqual([
        expect.stringMatching(/^CREATE TEMP TABLE/),
        expect.stringMatching(/^COPY "apm_stage_visitors_\d+"/),
        'INSERT INTO "visitors"',
      ]);
      const got = await t.sql`select count::int, run_id::int from visitors where pcode = 9 order by ts`;
      expect(got.map((r) => [r.count, r.run_id])).toEqual([
        [0, 1],
        [1, 1],
        [20, 2],
      ]);
    });
  });
});
