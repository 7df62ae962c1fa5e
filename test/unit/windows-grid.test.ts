import { describe, expect, it } from "vitest";
import { alignDown, alignUp, ceilToGrid, DAY_MS, floorToGrid, GRID_MS, HOUR_MS, isOnGrid, MINUTE_MS } from "../../src/windows/grid.ts";

const at = (d: number, h: number, m = 0, s = 0) => Date.UTC(2024, 0, d, h, m, s);

describe("5-minute grid", () => {
  it.each([
    ["inside a cube", at(15, 10, 7, 30), at(15, 10, 5), at(15, 10, 10)],
    ["on a boundary", at(15, 10, 5), at(15, 10, 5), at(15, 10, 5)],
    ["1 ms after a boundary", at(15, 10, 5) + 1, at(15, 10, 5), at(15, 10, 10)],
    ["1 ms before midnight", at(16, 0) - 1, at(15, 23, 55), at(16, 0)],
    ["before 1970", -1, -GRID_MS, 0],
  ])("%s", (_name, t, down, up) => {
    expect(floorToGrid(t)).toBe(down);
    expect(ceilToGrid(t)).toBe(up);
    expect(isOnGrid(floorToGrid(t))).toBe(true);
  });

  it("aligns grains to UTC epoch multiples: whole hours, UTC midnight", () => {
    const t = at(15, 10, 7, 30);
    expect(alignDown(t, HOUR_MS)).toBe(at(15, 10));
    expect(alignUp(t, HOUR_MS)).toBe(at(15, 11));
    expect(alignDown(t, DAY_MS)).toBe(at(15, 0));
    expect(alignUp(t, DAY_MS)).toBe(at(16, 0));
    expect(alignDown(t, 15 * MINUTE_MS)).toBe(at(15, 10, 0));
    expect(alignUp(at(15, 0), DAY_MS)).toBe(at(15, 0));
    // 2 days counted from 1970-01-01: 1970-01-02 12:00 belongs to the window starting 1970-01-01.
    expect(alignDown(Date.UTC(1970, 0, 2, 12), 2 * DAY_MS)).toBe(Date.UTC(1970, 0, 1));
    expect(alignUp(Date.UTC(1970, 0, 2, 12), 2 * DAY_MS)).toBe(Date.UTC(1970, 0, 3));
  });

  it.each([0, -GRID_MS, 7 * MINUTE_MS, 1.5 * GRID_MS])("rejects grain %d", (grain) => {
    expect(() => alignDown(at(15, 10), grain)).toThrow(RangeError);
  });

  it("rejects non-integer times", () => {
    expect(() => floorToGrid(Number.NaN)).toThrow(RangeError);
    expect(() => floorToGrid(1.5)).toThrow(RangeError);
  });
});
