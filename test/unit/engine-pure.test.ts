// The engine's pure parts: stream selection, record -> row mapping (the status text: status.test.ts).
import { describe, expect, it } from "vitest";
import { operation } from "../../src/catalogue/index.ts";
import { loadConfig } from "../../src/config.ts";
import { accountTarget } from "../../src/engine/fan-out.ts";
import { rowPlan } from "../../src/engine/row-plan.ts";
import { toRows } from "../../src/engine/rows.ts";
import { projectTarget, projectTargets, selectOperations, selectProjects } from "../../src/engine/targets.ts";
import type { Target } from "../../src/engine/types.ts";
import { UsageError } from "../../src/usage-error.ts";

describe("stream selection", () => {
  it("defaults to every stream enabled by default, never a form that needs input", () => {
    const ids = selectOperations(null).map((op) => op.id);
    expect(ids).toContain("stat.transaction");
    expect(ids).toContain("series.apdex.avg");
    expect(ids).not.toContain("series.apdex.oids");
    expect(ids).not.toContain("range.httpc.filtered");
    expect(ids).not.toContain("calls.tx_caller");
  });

  it("takes exact ids and prefixes, in catalogue order", () => {
    expect(selectOperations(["stat"]).map((op) => op.id)).toEqual([
      "stat.transaction",
      "stat.sql",
      "stat.httpc",
      "stat.error",
      "stat.remote",
    ]);
    expect(selectOperations(["range.heap_use.*", "scalar.tps"]).map((op) => op.id)).toEqual([
      "scalar.tps",
      "range.heap_use.avg",
      "range.heap_use.max",
    ]);
  });

  it("refuses unknown ids and streams that need input it cannot supply (usage error)", () => {
    expect(() => selectOperations(["stat.transactions"])).toThrow(UsageError);
    expect(() => selectOperations(["range.httpc.filtered"])).toThrow(/\{host\}, \{port\}/);
  });

  it("runs streams that need input once per configured input, each its own partition", () => {
    const inputs = {
      "range.httpc.filtered": [
        { host: "10.0.0.5", port: 8080 },
        { port: "443", host: "api" },
      ],
      "series.apdex.oids": [{ oids: [-5, 7] }],
    };
    const ids = selectOperations(null, inputs).map((op) => op.id);
    expect(ids).toContain("range.httpc.filtered");
    expect(ids).toContain("series.apdex.oids");
    expect(ids).not.toContain("calls.tx_caller");
    const targets = projectTargets(operation("range.httpc.filtered"), 9, inputs);
    expect(targets.map((t) => t.partition)).toEqual(["host=10.0.0.5&port=8080", "host=api&port=443"]);
    expect(targets[1]!.params).toEqual({ port: "443", host: "api" });
    expect(projectTargets(operation("series.apdex.oids"), 9, inputs)[0]!.partition).toBe("oids=-5,7");
    expect(projectTargets(operation("stat.sql"), 9, inputs)).toEqual([projectTarget(operation("stat.sql"), 9)]);
  });

  it("refuses a project without a token", () => {
    const config = loadConfig({ env: { APM_BASE_URL: "http://127.0.0.1:1", APM_PROJECTS: "5:t" } });
    expect(selectProjects(config, [5])).toEqual([5]);
    expect(() => selectProjects(config, [6])).toThrow(/6 have no token/);
  });
});

const parsed = (texts: readonly string[]) => texts.map((text) => JSON.parse(text) as Record<string, unknown>);

/**
 * `records` mapped twice, by two copies of the stream of `opId` (each copy a stream of its own plan,
 * row-plan.ts, learned from its first record): `planned` plans on the records' shape, the other on
 * another, mapping them the generic way. Both must give the same rows, keys in the same order.
 */
function plannedAndGeneric(opId: string, records: readonly Record<string, unknown>[]) {
  const copy = (): Target => {
    const target = projectTarget(operation(opId), 9);
    return { ...target, stream: { ...target.stream } };
  };
  const ctx = { runId: 5, windowStart: 0, windowEnd: 3_600_000 };
  const plannedTarget = copy();
  const planned = toRows(plannedTarget, records, ctx);
  const generic = toRows(copy(), [{ other: 1 }, ...records], ctx).slice(1);
  expect(planned).toEqual(generic);
  expect(planned.map((r) => Object.keys(r))).toEqual(generic.map((r) => Object.keys(r)));
  return { plannedTarget, planned };
}

describe("rows", () => {
  it("keeps unknown keys in extra, sets pcode, window and constants, and derives keys", () => {
    const target = projectTarget(operation("range.heap_use.max"), 3000000001);
    const [row] = toRows(target, [{ oid: -5, oname: "a", heap_use: 12.5, unit: "byte", surprise: "x", extra: { old: 1 } }], {
      runId: 7,
      windowStart: 0,
      windowEnd: 3_600_000,
    });
    expect(row).toMatchObject({
      pcode: 3000000001,
      oid: -5,
      heap_use: 12.5,
      time_merge: "max",
      run_id: 7,
      extra: { old: 1, surprise: "x" },
    });
    expect(row!.window_start).toBe(0);
    const [event] = toRows(
      projectTarget(operation("project.event_history"), 9),
      [{ id: 44, uuid: "", pcode: 7, event_time: new Date(0) }],
      { runId: null },
    );
    expect(event).toMatchObject({ pcode: 9, event_key: "44" });
    const filtered = projectTargets(operation("range.httpc.filtered"), 9, { "range.httpc.filtered": [{ host: "h", port: 80 }] })[0]!;
    const [f] = toRows(filtered, [{ url_hash: 1, host: "h", port: 80 }], { runId: null, windowStart: 0, windowEnd: 300_000 });
    expect(f).toMatchObject({ filter_host: "h", filter_port: "80", port: 80 });
    const [avg] = toRows(projectTarget(operation("series.apdex.avg"), 9), [{ oid: null, ts: new Date(0), value: 1 }], { runId: null });
    expect(avg).toMatchObject({ oid: 0, metric: "apdex", series_form: "avg" });
  });

  it("renames project_code to pcode and scopes fan-out rows to their partition", () => {
    const [p] = toRows(accountTarget(operation("account.projects")), [{ project_code: 35, project_name: "x" }], { runId: 1 });
    expect(p).toMatchObject({ pcode: 35, project_name: "x" });
    const [m] = toRows(accountTarget(operation("account.project_members"), "35"), [{ email: "a@b" }], { runId: 1 });
    expect(m).toMatchObject({ pcode: 35, email: "a@b" });
  });

  it("maps records of the stream's planned shape exactly as records of any other shape", () => {
    // Each copy of the stream is a stream of its own plan (row-plan.ts), learned from the first
    // record: `planned` plans on the records' shape, `generic` on another, mapping them the generic way.
    const records = () =>
      parsed([
        '{"id": 44, "uuid": "", "pcode": 7, "event_time": 0, "not_a_column": "x", "empty": null, "extra": {"old": 1}}',
        '{"id": 45, "uuid": "u-1", "pcode": 7, "event_time": 1000, "not_a_column": null, "empty": 3, "extra": {}}',
        '{"id": 46, "uuid": null, "pcode": 7, "event_time": 2000, "not_a_column": {"a": [1]}, "empty": null}',
        '{"uuid": "u-2", "id": 47, "pcode": 7, "event_time": 3000, "not_a_column": 1, "empty": 2, "extra": {"k": 2}}',
        '{"id": 48, "pcode": 7, "event_time": 4000}',
      ]);
    const { plannedTarget, planned } = plannedAndGeneric("project.event_history", records());
    // The compiled path was taken (else both sides are the generic way and equal trivially): the
    // stream's plan, learned by toRows from the first record, builds the first two and no other.
    const build = rowPlan(
      plannedTarget.stream,
      { other: 1 },
      { columnOf: () => null, derive: undefined, hasExtra: false, before: {}, after: {} },
    );
    expect(build).toBeTypeOf("function");
    expect(records().map((r) => build!(r, {}, {}) !== undefined)).toEqual([true, true, false, false, false]);
    expect(planned[0]).toMatchObject({ pcode: 9, event_key: "44", extra: { old: 1, not_a_column: "x" } });
    expect(planned[1]).toMatchObject({ event_key: "u-1", extra: { empty: 3 } });
    expect(planned[2]!.extra).toEqual({ not_a_column: { a: [1] } });
  });

  it("builds a row of a stream without a derive as one literal, equal to the generic way's, shared columns last", () => {
    // range.heap_use.max: a constant before the row's own columns' plan (time_merge), the project,
    // window and run after it; a record's own pcode is the project asked for.
    const { planned } = plannedAndGeneric(
      "range.heap_use.max",
      parsed([
        '{"oid": -5, "oname": "a", "heap_use": 12.5, "pcode": 7, "surprise": "x", "extra": {"old": 1}}',
        '{"oid": 6, "oname": null, "heap_use": 0, "pcode": 7, "surprise": null}',
        '{"oname": "b", "oid": 7, "heap_use": 1, "pcode": 7}',
      ]),
    );
    expect(planned[0]).toEqual({
      oid: -5,
      oname: "a",
      heap_use: 12.5,
      pcode: 9,
      time_merge: "max",
      window_start: 0,
      window_end: 3_600_000,
      run_id: 5,
      extra: { old: 1, surprise: "x" },
    });
    expect(planned[1]!.extra).toEqual({});
    // The literal itself: a shared key that is also the record's keeps its first place and takes the last value.
    const build = rowPlan(
      {},
      { a: 1, b: 2, extra: {} },
      {
        columnOf: (k) => (k === "b" ? null : k),
        derive: undefined,
        hasExtra: true,
        before: { c: 0 },
        after: { a: 0, d: 0 },
      },
    );
    const row = build!({ a: 1, b: 2, extra: { o: 1 } }, { c: 3 }, { a: 9, d: 4 });
    expect(row).toEqual({ a: 9, c: 3, d: 4, extra: { o: 1, b: 2 } });
    expect(Object.keys(row!)).toEqual(["a", "c", "d", "extra"]);
  });
});
