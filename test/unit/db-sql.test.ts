import { describe, expect, it } from "vitest";
import { rowsToJson } from "../../src/db/rowsJson.ts";
import { deleteWindow, insertFromJson, recordset, softDeleteFromJson, upsertFromJson } from "../../src/db/sqlText.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { lastPerKey } from "../../src/db/upsertRows.ts";

const statTx = tableInfo("stat_transaction");

describe("SQL builders", () => {
  it("reads a JSON batch with the column types of the drizzle table, quoting keyword columns", () => {
    expect(recordset(tableInfo("spot_values"), ["pcode", "user", "captured_at"])).toBe(
      'json_to_recordset($1::text::json) AS x("pcode" bigint, "user" double precision, "captured_at" timestamp with time zone)',
    );
  });

  it("inserts constants as typed parameters after the batch", () => {
    const s = insertFromJson(statTx, ["service_hash", "count"], { pcode: 7, window_start: new Date(0), window_end: new Date(3_600_000) });
    expect(s.text).toBe(
      'INSERT INTO "stat_transaction" ("pcode", "window_start", "window_end", "service_hash", "count") ' +
        'SELECT $2::bigint, $3::timestamp with time zone, $4::timestamp with time zone, x."service_hash", x."count" ' +
        'FROM json_to_recordset($1::text::json) AS x("service_hash" bigint, "count" bigint)',
    );
    expect(s.params).toEqual([null, 7, "1970-01-01T00:00:00.000Z", "1970-01-01T01:00:00.000Z"]);
  });

  it("deletes a window and the sub-windows inside it, within the extra scope", () => {
    const s = deleteWindow(tableInfo("heap_use"), 7, new Date(0), new Date(3_600_000), { time_merge: "avg" });
    expect(s.text).toBe(
      'DELETE FROM "heap_use" WHERE "pcode" = $1::bigint AND "window_start" >= $2::timestamptz AND "window_end" <= $3::timestamptz AND "time_merge" = $4::text',
    );
    expect(s.params).toEqual([7, "1970-01-01T00:00:00.000Z", "1970-01-01T01:00:00.000Z", "avg"]);
  });

  it("upserts a dimension: touches last_seen_at and clears deleted_at, updates only non-key columns", () => {
    const s = upsertFromJson(tableInfo("agents"), ["pcode", "oname", "active"], ["pcode", "oname"]);
    expect(s.text).toMatch(
      /ON CONFLICT \("pcode", "oname"\) DO UPDATE SET "active" = EXCLUDED\."active", "last_seen_at" = now\(\), "deleted_at" = NULL, "synced_at" = now\(\)$/,
    );
    expect(s.text).not.toContain("IS DISTINCT FROM");
  });

  it("upserts points only when a value changed (run_id alone is no change)", () => {
    const s = upsertFromJson(tableInfo("visitors"), ["pcode", "granularity", "ts", "count", "run_id"], ["pcode", "granularity", "ts"]);
    expect(s.text).toContain('DO UPDATE SET "count" = EXCLUDED."count", "run_id" = EXCLUDED."run_id", "synced_at" = now()');
    expect(s.text).toMatch(/WHERE \("visitors"\."count"\) IS DISTINCT FROM \(EXCLUDED\."count"\)$/);
  });

  it("refuses unknown columns and keys that are not written", () => {
    expect(() => insertFromJson(statTx, ["no_such_column"])).toThrow(/unknown column/);
    expect(() => upsertFromJson(tableInfo("agents"), ["pcode", "active"], ["pcode", "oname"])).toThrow(/key column/);
    expect(() => tableInfo("nope")).toThrow(/not a warehouse table/);
  });

  it("soft-deletes by anti-join against the present keys, not comparing the key columns the scope fixes", () => {
    const s = softDeleteFromJson(tableInfo("project_members"), { pcode: 7 }, ["pcode", "email"]);
    expect(s.text).toBe(
      'UPDATE "project_members" SET "deleted_at" = now(), "run_id" = $2::bigint WHERE "project_members"."pcode" = $3::bigint AND ' +
        '"project_members"."deleted_at" IS NULL AND NOT EXISTS (SELECT 1 FROM json_to_recordset($1::text::json) AS k("email" text) ' +
        'WHERE k."email" = "project_members"."email")',
    );
    expect(s.keys).toEqual(["email"]);
    expect(s.params).toEqual([null, null, 7]);
    const whole = softDeleteFromJson(tableInfo("group_members"), {}, ["group_key", "email"]);
    expect(whole.text).toContain('k."group_key" = "group_members"."group_key" AND k."email" = "group_members"."email"');
    const single = softDeleteFromJson(tableInfo("project_details"), { pcode: 7 }, ["pcode"]);
    expect(single.text).toContain("NOT EXISTS (SELECT 1 FROM json_array_elements($1::text::json))");
    expect(() => softDeleteFromJson(statTx, {}, ["service_hash"])).toThrow(/deleted_at/);
  });

  it("upserts with constants sent once as parameters, the key partly among them", () => {
    const s = upsertFromJson(tableInfo("metric_points"), ["metric", "ts", "value"], ["pcode", "metric", "series_form", "oid", "ts"], {
      pcode: 7,
      series_form: "avg",
      oid: 0,
    });
    expect(s.text).toContain(
      'INSERT INTO "metric_points" ("pcode", "series_form", "oid", "metric", "ts", "value") SELECT $2::bigint, $3::text, $4::bigint, x."metric"',
    );
    expect(s.text).toContain('ON CONFLICT ("pcode", "metric", "series_form", "oid", "ts") DO UPDATE SET "value" = EXCLUDED."value"');
    expect(s.params).toEqual([null, 7, "avg", 0]);
  });
});

describe("rowsToJson", () => {
  it("keeps bigint exact, turns epoch ms of timestamptz columns and Dates into ISO text, drops other keys", () => {
    const info = tableInfo("range_exceptions");
    const json = rowsToJson(
      info,
      ["snap_seq", "time", "oids", "extra", "msg"],
      [{ snap_seq: 6068699991557528332n, time: 1535557500000, oids: [-1459620666], extra: { big: 2n ** 63n - 1n }, ignored: 1 }],
    );
    expect(json).toBe(
      '[{"snap_seq":6068699991557528332,"time":"2018-08-29T15:45:00.000Z","oids":[-1459620666],"extra":{"big":9223372036854775807},"msg":null}]',
    );
    expect(rowsToJson(info, ["msg"], [{ msg: "big:1 \u0001big:2" }])).toBe('[{"msg":"big:1 \\u0001big:2"}]');
  });
});

describe("lastPerKey", () => {
  it("collapses repeated keys to the last row, keeping first-seen order", () => {
    const rows = [
      { pcode: 1, ts: new Date(0), count: 1 },
      { pcode: 2, ts: new Date(0), count: 2 },
      { pcode: 1, ts: new Date(0), count: 3 },
    ];
    expect(lastPerKey(rows, ["pcode", "ts"])).toEqual([
      { pcode: 1, ts: new Date(0), count: 3 },
      { pcode: 2, ts: new Date(0), count: 2 },
    ]);
  });
});
