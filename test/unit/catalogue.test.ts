// The catalogue declares what the engine used to infer: a stream's kind says windowed or snapshot,
// its scope says account or project, a child stream names its parent list (fan-out), and open
// rows are columns, not SQL. These checks keep the declarations consistent with the API facts.
import { describe, expect, it } from "vitest";
import { OPERATIONS, operation } from "../../src/catalogue/index.ts";
import { isAccountStream, isWindowed } from "../../src/catalogue/types.ts";
import { openPredicate } from "../../src/db/ledger/readOpenTimes.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { accountTarget, askableKeys, parentColumns } from "../../src/engine/fan-out.ts";

const streams = OPERATIONS.filter((op) => op.stream);

describe("catalogue declarations", () => {
  it("a stream is windowed exactly when its operation takes a time window", () => {
    for (const op of streams) expect(isWindowed(op.stream!), op.id).toBe(op.windowLimitMs !== null);
  });

  it("account streams are those that send no project code", () => {
    for (const op of streams) expect(isAccountStream(op), op.id).toBe(!op.sendsPcode);
    expect(streams.filter(isAccountStream).map((op) => op.id)).toEqual([
      "account.projects",
      "account.project_members",
      "account.groups",
      "account.group_members",
      "account.group_projects",
    ]);
  });

  it("every parent is an account list whose table has the key; the child writes it and asks with it", () => {
    const children = streams.filter((op) => op.stream!.parent);
    expect(children.map((op) => op.id)).toEqual(["account.project_members", "account.group_members", "account.group_projects"]);
    for (const op of children) {
      const parent = op.stream!.parent!;
      const list = operation(parent.stream);
      expect(list.stream?.parent, op.id).toBeUndefined();
      expect(tableInfo(list.stream!.table).types.has(parent.key), op.id).toBe(true);
      expect(tableInfo(op.stream!.table).types.has(parent.column), op.id).toBe(true);
      expect(op.path, op.id).toContain(`{${parent.param}}`);
    }
  });

  it("fan-out: a key fills the parameter and the column with the column's type; masked group keys are not asked for", () => {
    const members = operation("account.project_members");
    expect(accountTarget(members, "35")).toMatchObject({ pcode: 0, partition: "35", params: { projectCode: 35 } });
    expect(parentColumns(members.stream!, "35")).toEqual({ pcode: 35 });
    const groups = operation("account.group_members");
    expect(accountTarget(groups, "g1").params).toEqual({ groupKey: "g1" });
    expect(askableKeys(groups.stream!.parent!, ["g1", "grp****ab12", "g2"])).toEqual({ keys: ["g1", "g2"], skipped: ["grp****ab12"] });
    expect(parentColumns(operation("account.projects").stream!, "")).toEqual({});
  });

  it("open rows are declared by columns of the table; the predicate quotes them", () => {
    const events = operation("project.event_history").stream!;
    const rule = events.reReadOpen!;
    for (const c of [...rule.nullColumns, ...rule.trueColumns]) expect(tableInfo(events.table).types.has(c), c).toBe(true);
    expect(tableInfo(events.table).partitionColumn).toBe("event_time");
    expect(openPredicate(rule)).toBe(`"off_time" IS NULL AND "disabled" IS NOT TRUE`);
  });

  it("a measure is a numeric column of an aggregate's table; every statistic and range record count has one", () => {
    for (const op of OPERATIONS.filter((o) => o.stream?.measure !== undefined)) {
      expect(op.stream!.kind, op.id).toBe("aggregate");
      expect(["bigint", "integer", "double precision"], op.id).toContain(tableInfo(op.stream!.table).types.get(op.stream!.measure!));
    }
    const measured = OPERATIONS.filter((o) => o.stream?.measure).map((o) => o.id);
    expect(measured).toEqual(expect.arrayContaining(["stat.transaction", "stat.remote", "range.sql", "range.httpc", "range.transaction"]));
    expect(operation("range.heap_use.avg").stream!.measure).toBeUndefined();
  });

  it("only the statistics declare a clock field", () => {
    expect(streams.filter((op) => op.clockField).map((op) => op.area)).toEqual(["stats", "stats", "stats", "stats", "stats"]);
  });
});
