// The COPY writer's fast path reads parsed records through getters (engine/rows.ts recordReader)
// instead of building row objects with toRows. For every aggregate stream, on a sandbox answer
// (with unknown keys added), both paths must give the same value for every column of every row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { copyEncoder } from "../../src/db/copyText.ts";
import { tableInfo } from "../../src/db/tables.ts";
import { paramValues, recordReader, toRows, writableColumns } from "../../src/engine/rows.ts";
import { projectTarget } from "../../src/engine/targets.ts";
import type { Target } from "../../src/engine/types.ts";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { parseJson } from "../../src/schemas/json.ts";
import { parseResponse } from "../../src/schemas/parse-response.ts";
import { paramsFor, T } from "../support/sandbox-params.ts";

/** COPY text -> one object per line, column name -> field text. */
function lines(columns: readonly string[], text: string): Record<string, string>[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((line) => Object.fromEntries(line.split("\t").map((field, i) => [columns[i]!, field])));
}

const aggregates = OPERATIONS.filter((op) => op.inSpec && op.stream?.kind === "aggregate" && !op.stream.paramColumns);

describe("COPY straight from parsed records equals COPY of rows", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 5, now: () => Date.UTC(2025, 0, 15, 12, 0), burstKeys: 50 });
  });
  afterAll(() => sb.stop());

  it("covers the statistics", () => {
    expect(aggregates.map((op) => op.id)).toEqual(expect.arrayContaining(["stat.transaction", "stat.error", "stat.remote"]));
  });

  it.each(aggregates.map((op) => [op.id, op] as const))("%s", async (_id, op) => {
    const pcode = sb.projects[0]!.pcode;
    const res = await callSandbox(sb, op.id, paramsFor(op, sb, ""));
    expect(res.status, res.text).toBe(200);
    // Keys the schema does not know go to extra, on both paths.
    const body = parseJson(res.text) as Record<string, unknown>;
    const list = (op.records!.at === null ? body : body[op.records!.at]) as Record<string, unknown>[];
    list.forEach((raw, i) => {
      if (i % 2 === 0) raw.surprise = i;
    });
    const { records } = parseResponse(op, body);
    expect(records.length, `${op.id}: the sandbox answered records`).toBeGreaterThan(0);
    const target: Target = projectTarget(op, pcode);
    const info = tableInfo(target.stream.table);
    const scope = { ...target.stream.constants, ...paramValues(target) };
    const own = writableColumns(info).filter((c) => c !== "pcode" && !(c in scope));
    const ctx = { runId: 42, windowStart: T, windowEnd: T + 3_600_000 };

    const tally = { replaced: 0 };
    const viaRows = copyEncoder(info, own, { constants: { pcode, ...scope }, tally })(toRows(target, records, ctx));
    const reader = recordReader(target, info, own, ctx);
    // Only records of no declared shape (explode) or a derive need row objects.
    if (reader === null) {
      expect(op.records!.explode ?? target.stream.derive, `${op.id}: why no reader`).toBeDefined();
      return;
    }
    const constants = { pcode, ...scope, ...reader!.shared(ctx) };
    const viaRecords = copyEncoder(info, reader!.columns, { constants, getters: reader!.getters, tally })(records);

    const expected = lines([...Object.keys({ pcode, ...scope }), ...own], viaRows);
    const actual = lines([...Object.keys(constants), ...reader!.columns], viaRecords);
    expect(actual).toHaveLength(records.length);
    expect(actual).toEqual(expected);
    expect(viaRecords).toContain('"surprise"');
  });
});
