// Which monthly partitions a write needs (issue 18 item 1): months in UTC, partition names, and the
// months of a fetched window's rows read before its transaction, for every partitioned stream.
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { partitionName } from "../../src/db/partitionName.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { emptyWindowFetch } from "../../src/engine/fetch-window.ts";
import { toRows } from "../../src/engine/rows.ts";
import { projectTarget } from "../../src/engine/targets.ts";
import { windowMonths } from "../../src/warehouse/window-months.ts";
import { addMonths, monthStart, monthsOf } from "../../src/windows/months.ts";

const utc = (...parts: [number, number, ...number[]]) => Date.UTC(...parts);

describe("months", () => {
  it("are UTC calendar months, whatever the instant inside", () => {
    expect(monthStart(utc(2026, 1, 28, 23, 59, 59, 999))).toBe(utc(2026, 1, 1));
    expect(monthStart(utc(2026, 2, 1))).toBe(utc(2026, 2, 1));
    expect(addMonths(utc(2026, 11, 15), 1)).toBe(utc(2027, 0, 1));
    expect(addMonths(utc(2026, 0, 31), -1)).toBe(utc(2025, 11, 1));
  });

  it("of a list: distinct, sorted, Dates and epoch ms alike, non-times skipped", () => {
    const times = [
      new Date(utc(2026, 2, 3)),
      utc(2026, 2, 9),
      utc(2025, 11, 31, 23),
      null,
      "x",
      utc(2026, 2, 1),
      new Date(utc(2026, 0, 1)),
    ];
    expect(monthsOf(times)).toEqual([utc(2025, 11, 1), utc(2026, 0, 1), utc(2026, 2, 1)]);
  });

  it("name their partitions <table>_pYYYY_MM", () => {
    expect(partitionName("stat_sql", utc(2026, 2, 31, 23))).toBe("stat_sql_p2026_03");
    expect(partitionName("events", Date.UTC(12345, 0, 2))).toBe("events_p12345_01");
  });
});

describe("the months of a fetched window's rows", () => {
  const partitioned = OPERATIONS.filter((op) => op.stream && op.windowLimitMs !== null && tableInfo(op.stream.table).partitionColumn);

  it("are those of the column the rows are partitioned on, for every partitioned stream", () => {
    expect(partitioned.length).toBeGreaterThan(20);
    const start = utc(2026, 4, 31, 23);
    for (const op of partitioned) {
      const target = projectTarget(op, 7);
      const column = tableInfo(op.stream!.table).partitionColumn!;
      // A record dated a year before the window (a server that lies), under every name it may carry.
      const stray = new Date(utc(2025, 4, 2));
      const record = {
        [column]: stray,
        ...Object.fromEntries(Object.entries(op.stream!.rename ?? {}).map(([k, v]) => [k, v === column ? stray : 1])),
      };
      const leaf = { start, end: start + 3_600_000, truncated: false, expected: null, fetched: 1, records: [record], quarantined: [] };
      const rows = toRows(target, [record], { runId: 1, windowStart: leaf.start, windowEnd: leaf.end });
      const months = windowMonths(target, { ...emptyWindowFetch(), leaves: [leaf] });
      expect(months, op.id).toEqual(monthsOf(rows.map((r) => r[column])));
      expect(months, op.id).toEqual(column === "window_start" ? [utc(2026, 4, 1)] : [utc(2025, 4, 1)]);
    }
  });

  it("are none for a table that is not partitioned", () => {
    const op = OPERATIONS.find((o) => o.id === "project.agents_window")!;
    const leaf = { start: 0, end: 1, truncated: false, expected: null, fetched: 0, records: [], quarantined: [] };
    expect(windowMonths(projectTarget(op, 7), { ...emptyWindowFetch(), leaves: [leaf] })).toEqual([]);
  });
});
