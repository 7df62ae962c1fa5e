// Which monthly partitions a write needs (issue 18 item 1): months in UTC, partition names, and the
// months a window's write may need, read before its transaction, for every partitioned stream.
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { partitionName } from "../../src/db/partitions/partitionName.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { rowTimeBounds } from "../../src/engine/window-rows.ts";
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

describe("the months a window's write may make partitions for", () => {
  const partitioned = OPERATIONS.filter((op) => op.stream && op.windowLimitMs !== null && tableInfo(op.stream.table).partitionColumn);

  it("are those of the window asked for, widened by the table's slack, never a stray row's", () => {
    expect(partitioned.length).toBeGreaterThan(20);
    const window = { start: utc(2026, 4, 31, 23), end: utc(2026, 5, 1) };
    for (const op of partitioned) {
      const info = tableInfo(op.stream!.table);
      const { bounds, months } = rowTimeBounds(info.name, window);
      if (info.window.includes(info.partitionColumn!)) {
        // The rows take their time from the window: nothing to check, its month only.
        expect(bounds, op.id).toBeNull();
        expect(months, op.id).toEqual([utc(2026, 4, 1)]);
        continue;
      }
      expect(bounds, op.id).toEqual({ start: window.start - info.slack!.before, end: window.end + info.slack!.after });
      expect(months, op.id).toEqual(monthsOf([bounds!.start, window.start, window.end, bounds!.end - 1]));
      // A point a year before (a server that lies) has no partition made for it.
      expect(months, op.id).not.toContain(utc(2025, 4, 1));
    }
  });

  it("events may lie a month before their window; points an hour", () => {
    const window = { start: utc(2026, 4, 1), end: utc(2026, 4, 1, 1) };
    expect(rowTimeBounds("events", window).months).toEqual([utc(2026, 2, 1), utc(2026, 3, 1), utc(2026, 4, 1)]);
    expect(rowTimeBounds("metric_points", window).months).toEqual([utc(2026, 3, 1), utc(2026, 4, 1)]);
    expect(rowTimeBounds("metric_points", { start: utc(2026, 4, 2), end: utc(2026, 4, 3) }).months).toEqual([utc(2026, 4, 1)]);
  });

  it("are none for a table that is not partitioned", () => {
    expect(rowTimeBounds("agent_inventory", { start: 0, end: 1 })).toEqual({ bounds: null, months: [] });
  });
});
