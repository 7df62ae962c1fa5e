import { describe, expect, it } from "vitest";
import { deleteMovedFromStaged, deleteWindow, presentKeyColumns, softDeleteFromStaged, upsertFromStaged } from "../../src/db/sqlText.ts";
import { tableInfo } from "../../src/db/tables.ts";

const statTx = tableInfo("stat_transaction");

describe("SQL builders", () => {
  it("upserts from a staged table, constants as typed parameters, quoting keyword columns", () => {
    const s = upsertFromStaged(tableInfo("spot_values"), ["captured_at", "user"], ["pcode", "captured_at"], { pcode: 7 }, '"st_1"');
    expect(s.text).toMatch(
      /^INSERT INTO "spot_values" \("pcode", "captured_at", "user"\) SELECT \$1::bigint, x\."captured_at", x\."user" FROM \(SELECT DISTINCT ON \("captured_at"\) \* FROM "st_1" ORDER BY "captured_at", "apm_ord" DESC\) AS x ON CONFLICT \("pcode", "captured_at"\) DO UPDATE SET "user" = EXCLUDED\."user"/,
    );
    expect(s.params).toEqual([7]);
  });

  it("deletes the stored row of an event that arrives at another time (same key but for its partition column)", () => {
    const s = deleteMovedFromStaged(tableInfo("events"), ["pcode", "event_key", "event_time"], { pcode: 7 }, '"st_2"');
    expect(s.text).toBe(
      'DELETE FROM "events" USING (SELECT DISTINCT ON ("event_key") * FROM "st_2" ORDER BY "event_key", "apm_ord" DESC) AS x WHERE "events"."pcode" = $1::bigint AND "events"."event_key" = ANY(ARRAY(SELECT "event_key" FROM "st_2")) AND "events"."event_key" = x."event_key" AND "events"."event_time" <> x."event_time"',
    );
    expect(s.params).toEqual([7]);
    // A point's time is part of what it is: its rows never move.
    expect(() => deleteMovedFromStaged(tableInfo("visitors"), ["pcode", "granularity", "ts"], {}, "x")).toThrow(/do not move/);
  });

  it("deletes a window and the sub-windows inside it, within the extra scope", () => {
    const s = deleteWindow(tableInfo("heap_use"), 7, new Date(0), new Date(3_600_000), { time_merge: "avg" });
    expect(s.text).toBe(
      'DELETE FROM "heap_use" WHERE "pcode" = $1::bigint AND "window_start" >= $2::timestamptz AND "window_start" < $3::timestamptz AND "window_end" <= $3::timestamptz AND "time_merge" = $4::text',
    );
    expect(s.params).toEqual([7, "1970-01-01T00:00:00.000Z", "1970-01-01T01:00:00.000Z", "avg"]);
  });

  it("upserts a dimension: touches last_seen_at and clears deleted_at, updates only non-key columns", () => {
    const s = upsertFromStaged(tableInfo("agents"), ["pcode", "oname", "active"], ["pcode", "oname"], {}, "x");
    expect(s.text).toMatch(
      /ON CONFLICT \("pcode", "oname"\) DO UPDATE SET "active" = EXCLUDED\."active", "last_seen_at" = now\(\), "deleted_at" = NULL, "synced_at" = now\(\)$/,
    );
    expect(s.text).not.toContain("IS DISTINCT FROM");
  });

  it("upserts points only when a value changed (run_id alone is no change)", () => {
    const s = upsertFromStaged(
      tableInfo("visitors"),
      ["pcode", "granularity", "ts", "count", "run_id"],
      ["pcode", "granularity", "ts"],
      {},
      "x",
    );
    expect(s.text).toContain('DO UPDATE SET "count" = EXCLUDED."count", "run_id" = EXCLUDED."run_id", "synced_at" = now()');
    expect(s.text).toMatch(/WHERE \("visitors"\."count"\) IS DISTINCT FROM \(EXCLUDED\."count"\)$/);
  });

  it("refuses unknown columns and keys that are not written", () => {
    expect(() => upsertFromStaged(statTx, ["no_such_column"], [], {}, "x")).toThrow(/unknown column/);
    expect(() => upsertFromStaged(tableInfo("agents"), ["pcode", "active"], ["pcode", "oname"], {}, "x")).toThrow(/key column/);
    expect(() => tableInfo("nope")).toThrow(/not a warehouse table/);
  });

  it("soft-deletes by anti-join against the staged present keys, not comparing the key columns the scope fixes", () => {
    const members = tableInfo("project_members");
    expect(presentKeyColumns(members, { pcode: 7 }, ["pcode", "email"])).toEqual(["email"]);
    const s = softDeleteFromStaged(members, { pcode: 7 }, ["pcode", "email"], '"st_2"');
    expect(s.text).toBe(
      'UPDATE "project_members" SET "deleted_at" = now(), "run_id" = $1::bigint WHERE "project_members"."pcode" = $2::bigint AND ' +
        '"project_members"."deleted_at" IS NULL AND NOT EXISTS (SELECT 1 FROM "st_2" AS k WHERE k."email" = "project_members"."email")',
    );
    expect(s.params).toEqual([null, 7]);
    const whole = softDeleteFromStaged(tableInfo("group_members"), {}, ["group_key", "email"], "k1");
    expect(whole.text).toContain('k."group_key" = "group_members"."group_key" AND k."email" = "group_members"."email"');
    // Nothing present: every row of the scope goes.
    const none = softDeleteFromStaged(tableInfo("project_details"), { pcode: 7 }, ["pcode"], null);
    expect(none.text).toBe(
      'UPDATE "project_details" SET "deleted_at" = now(), "run_id" = $1::bigint WHERE "project_details"."pcode" = $2::bigint AND "project_details"."deleted_at" IS NULL',
    );
    expect(() => softDeleteFromStaged(tableInfo("project_details"), { pcode: 7 }, ["pcode"], "k2")).toThrow(/key column beyond the scope/);
    expect(() => presentKeyColumns(statTx, {}, ["service_hash"])).toThrow(/deleted_at/);
  });

  it("upserts with constants sent once as parameters, the key partly among them", () => {
    const s = upsertFromStaged(
      tableInfo("metric_points"),
      ["metric", "ts", "value"],
      ["pcode", "metric", "series_form", "oid", "ts"],
      { pcode: 7, series_form: "avg", oid: 0 },
      "x",
    );
    expect(s.text).toContain(
      'INSERT INTO "metric_points" ("pcode", "series_form", "oid", "metric", "ts", "value") SELECT $1::bigint, $2::text, $3::bigint, x."metric"',
    );
    expect(s.text).toContain('ON CONFLICT ("pcode", "metric", "series_form", "oid", "ts") DO UPDATE SET "value" = EXCLUDED."value"');
    expect(s.params).toEqual([7, "avg", 0]);
  });
});
