// copyTable, the transfer's streaming copy: rows leave the source through a cursor a batch at a
// time (the batch sized to a character budget, never the whole table), and arrive equal: text
// that needs COPY's escapes, JSON, arrays, doubles at their last digit, times to the microsecond.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "../../src/db/partitions/ensurePartitions.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { copyTable } from "../../src/warehouse/transfer-copy.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const ROWS = 3000;
const BIG = 100_000;
const BUDGET = 64 * 1024;

let source: TestDatabase;
let target: TestDatabase;
const statements: string[] = [];

const dump = (db: TestDatabase, table: string, cols: string) =>
  db.sql.begin(async (tx) => {
    await tx.unsafe("SET LOCAL TIME ZONE 'UTC'");
    await tx.unsafe("SET LOCAL extra_float_digits = 3");
    return (await tx.unsafe<{ r: string }[]>(`SELECT row(${cols})::text AS r FROM ${table} ORDER BY 1`)).map((r) => r.r);
  });

beforeAll(async () => {
  [source, target] = await Promise.all([createTestDatabase({ debug: (_c, query) => void statements.push(query) }), createTestDatabase()]);
  // Every 100th record is 100 KB: a batch sized for the small ones must not take many of those.
  await source.sql`
    INSERT INTO quarantine (run_id, stream, pcode, window_start, record_index, raw, raw_text, reason)
    SELECT i, 'stat.sql', 9007199254740993 - i, timestamptz '2026-03-31 23:59:59.123456+00' + i * interval '1 minute', i,
           jsonb_build_object('k', i, 'tab', E'a\tb', 'nested', jsonb_build_array(1.5, null, 'x"y')),
           CASE WHEN i % 100 = 0 THEN repeat('x', ${BIG}) ELSE E'back\\\\slash\\ttab\\nnewline\\r\\u00e9 ' || i END,
           'reason ' || i
      FROM generate_series(1, ${ROWS}) AS i`;
  for (const db of [source, target]) await ensurePartitions(db.sql, "metric_points", [Date.UTC(2026, 0, 1)]);
  await source.sql`
    INSERT INTO metric_points (pcode, metric, series_form, oid, ts, value, extra)
    SELECT 1, 'apdex', 'agent', i, timestamptz '2026-01-01' + i * interval '5 minutes', v, '{}'
      FROM unnest(ARRAY[0.1 + 0.2, 1e-300, -0.0, 'NaN', 'Infinity', 1.7976931348623157e308, 123456.789]::float8[]) WITH ORDINALITY AS t(v, i)`;
});

afterAll(async () => {
  await Promise.all([source?.drop(), target?.drop()]);
});

describe("copyTable", () => {
  for (const table of ["quarantine", "metric_points"])
    it(`copies ${table} equal, reading it a batch at a time`, async () => {
      const columns = [...tableInfo(table).types.keys()];
      statements.length = 0;
      const copied = await source.sql.begin((src) =>
        target.sql.begin((dst) => copyTable(src, dst, table, columns, { batchChars: BUDGET })),
      );
      const cols = columns.map((c) => `"${c}"`).join(", ");
      const [from, to] = await Promise.all([dump(source, table, cols), dump(target, table, cols)]);
      expect(from.length).toBeGreaterThan(0);
      expect(copied).toBe(from.length);
      expect(to).toEqual(from);
      // The table is read through the cursor only, never by one SELECT of every row.
      const reads = statements.filter((s) => s.includes(`FROM "${table}"`));
      expect(reads).toHaveLength(1);
      expect(reads[0]).toMatch(/^DECLARE /);
      if (table !== "quarantine") return;
      const fetches = statements.filter((s) => s.startsWith("FETCH ")).map((s) => Number(/FETCH (\d+)/.exec(s)![1]));
      // ~3.7 MB of rows (30 of them 100 KB) under a 64 KiB budget: many batches, each asking for at most a budget's worth of small rows.
      expect(fetches.length).toBeGreaterThan(15);
      expect(Math.max(...fetches.slice(1))).toBeLessThanOrEqual(BUDGET / 30);
      // A batch that held 100 KB records makes the next one ask for fewer rows (500, 54, 321, 57, 33, ...).
      expect(Math.min(...fetches)).toBeLessThan(Math.max(...fetches.slice(1)) / 5);
    });
});
