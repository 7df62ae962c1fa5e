import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { parseUtcTime } from "../../src/util/time.ts";

describe("parseUtcTime (flags and config start)", () => {
  it("reads dates and zone-less times as UTC and honours an explicit zone", () => {
    expect(parseUtcTime("2026-01-02")).toBe(Date.UTC(2026, 0, 2));
    expect(parseUtcTime("2026-01-02T10:30")).toBe(Date.UTC(2026, 0, 2, 10, 30));
    expect(parseUtcTime("2026-01-02 10:30:05")).toBe(Date.UTC(2026, 0, 2, 10, 30, 5));
    expect(parseUtcTime("2026-01-02T10:30+09:00")).toBe(Date.UTC(2026, 0, 2, 1, 30));
    expect(parseUtcTime("2026-01-02T10:30Z")).toBe(Date.UTC(2026, 0, 2, 10, 30));
    expect(parseUtcTime("yesterday")).toBeNull();
    expect(parseUtcTime("2026-13-40")).toBeNull();
  });

  it("is what APM_START uses (besides durations ago)", () => {
    const env = { APM_BASE_URL: "http://127.0.0.1:1" };
    expect(loadConfig({ env: { ...env, APM_START: "2026-01-02 06:00" } }).sync.startMs).toBe(Date.UTC(2026, 0, 2, 6));
    expect(loadConfig({ env: { ...env, APM_START: "2d" }, now: Date.UTC(2026, 0, 3) }).sync.startMs).toBe(Date.UTC(2026, 0, 1));
  });
});
