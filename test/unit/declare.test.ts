// One declaration per column (src/kernel/declare.ts): the record schema, the drizzle
// table and the dictionary entry derived from one declaration agree. (The warehouse's own tables are
// checked against the docs samples and the migrations by conformance, dictionary and db-schema.)
import { getTableConfig, pgTable, text as textColumn } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import {
  columns,
  docsOf,
  hash,
  integerOf,
  keyOf,
  local,
  measure,
  named,
  recordOf,
  renamesOf,
  shapeOf,
  tableOf,
  tally,
  text,
} from "../../src/kernel/declare.ts";
import { windowedTable } from "../../src/kernel/tables.ts";

const sample = columns({
  filter_host: local(() => textColumn().notNull(), { text: "The host asked for.", conversion: "the request's input" }),
  UrlHash: hash("Hash of the URL.").key,
  projectCode: hash("Project code.").storedAs("pcode"),
  Total: tally("Number of calls."),
  Error: tally("Number of calls that failed.").optional,
  timeAvg: measure("Average time."),
  msg: text(named("Message.")),
});

describe("a column declaration", () => {
  it("gives the record schema its API fields in column order, and no local column", () => {
    expect(Object.keys(shapeOf(sample))).toEqual(["UrlHash", "projectCode", "Total", "Error", "timeAvg", "msg"]);
  });

  it("parses a record to snake_case keys, optional fields null, unknown ones in extra", () => {
    const row = recordOf(sample).parse({ UrlHash: -5, projectCode: 7, Total: "3", timeAvg: "1.5", other: 1 });
    expect(row).toEqual({ url_hash: -5, project_code: 7, total: 3, error: null, time_avg: 1.5, msg: null, extra: { other: 1 } });
    // A required field missing, a count below zero: refused.
    expect(recordOf(sample).safeParse({ projectCode: 7, Total: 1 }).success).toBe(false);
    expect(recordOf(sample).safeParse({ UrlHash: 1, projectCode: 7, Total: -1 }).success).toBe(false);
  });

  it("gives the table every column under its name, renamed ones under theirs, with the declared types", () => {
    const table = getTableConfig(pgTable("declared", tableOf(sample)));
    expect(table.columns.map((c) => [c.name, c.getSQLType(), c.notNull])).toEqual([
      ["filter_host", "text", true],
      ["url_hash", "bigint", false],
      ["pcode", "bigint", false],
      ["total", "bigint", false],
      ["error", "bigint", false],
      ["time_avg", "double precision", false],
      ["msg", "text", false],
    ]);
    expect(renamesOf(sample)).toEqual({ project_code: "pcode" });
  });

  it("makes a windowed table unique on its window and the declared key, and refuses one without a key", () => {
    const keyed = columns({ ...sample, Port: integerOf("Port.").key });
    expect(keyOf(keyed)).toEqual(["url_hash", "port"]);
    const config = getTableConfig(windowedTable("declared_windowed", keyed));
    expect(config.uniqueConstraints.map((u) => u.columns.map((c) => c.name))).toEqual([
      ["pcode", "window_start", "window_end", "url_hash", "port"],
    ]);
    expect(() => windowedTable("no_key", columns({ msg: text("x") }))).toThrow(/declares no key column/);
  });

  it("gives the dictionary each column's words, and the API field of those a record fills", () => {
    const docs = docsOf(sample);
    expect(Object.keys(docs)).toEqual(["filter_host", "url_hash", "pcode", "total", "error", "time_avg", "msg"]);
    expect(docs.filter_host).toEqual({ text: "The host asked for.", conversion: "the request's input" });
    expect(docs.url_hash).toMatchObject({ field: "UrlHash", text: "Hash of the URL." });
    expect(docs.pcode?.field).toBe("projectCode");
    expect(docs.total).toMatchObject({ field: "Total", unit: "count", text: "Number of calls (not documented: name only)." });
    expect(docs.time_avg?.unit).toBe("not documented");
  });

  it("refuses two keys on one column, and a field that would land on extra", () => {
    expect(() => columns({ serviceHash: hash("a"), service_hash: hash("b") })).toThrow(
      /serviceHash and service_hash both map to service_hash/,
    );
    expect(() => columns({ a: hash("a").storedAs("b"), b: hash("b") })).toThrow(/both map to b/);
    expect(() => columns({ Extra: text("x") })).toThrow(/map to extra/);
  });
});
