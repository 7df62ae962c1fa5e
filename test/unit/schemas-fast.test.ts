// The fast lane of record parsing (src/schemas/fast.ts) against zod, the definition: on every
// record of every docs sample and of a sandbox answer of every operation, and on each of those
// records with one field changed to an awkward value, the fast lane either steps aside (INVALID)
// or gives exactly zod's output. It must never accept a record zod refuses.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { STAT_TYPES } from "../../src/catalogue/stats.ts";
import type { OperationDef } from "../../src/catalogue/types.ts";
import { INVALID } from "../../src/kernel/fast.ts";
import { fastParserOf } from "../../src/kernel/record.ts";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { parseJson } from "../../src/schemas/json.ts";
import { fixturePath } from "../support/fixtures.ts";
import { paramsFor } from "../support/sandbox-params.ts";

const SAMPLES = fixturePath("api-samples");

/** Values that trip up converters: text numbers, junk text, huge and fractional numbers, wrong kinds. */
const AWKWARD: unknown[] = [
  null,
  undefined,
  "",
  " 7 ",
  "600.0",
  "4.5187527E-4",
  "0,",
  "abc",
  "TRUE",
  "2018-10-19T07:17:03.774",
  0,
  -1,
  1.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  123456789012345678901234567890n,
  Number.NaN,
  true,
  [],
  [1, "a"],
  {},
  { nested: 1 },
];

interface Tally {
  fast: number;
  zod: number;
}

/** Checks one raw record; counts which lane took it. */
function same(schema: z.ZodType, raw: unknown, tally: Tally, what: string): void {
  const fast = fastParserOf(schema);
  expect(fast, `${what}: a recordSchema has a fast lane`).toBeDefined();
  const viaZod = schema.safeParse(raw);
  const viaFast = fast!(raw);
  if (viaFast === INVALID) {
    tally.zod += 1;
    return;
  }
  tally.fast += 1;
  expect(viaZod.success, `${what}: the fast lane accepted a record zod refuses: ${viaZod.error?.message}`).toBe(true);
  expect(viaFast, what).toStrictEqual(viaZod.data);
}

function recordsOf(op: OperationDef, body: unknown): unknown[] {
  const env = op.envelope.safeParse(body);
  if (!env.success || env.data === null || env.data === undefined || !op.records) return [];
  const list = op.records.at === null ? env.data : (env.data as Record<string, unknown>)[op.records.at];
  return Array.isArray(list) ? list : [];
}

function check(op: OperationDef, records: readonly unknown[], source: string): Tally {
  const tally: Tally = { fast: 0, zod: 0 };
  const schema = op.records!.schema as z.ZodType;
  for (const [i, raw] of records.entries()) same(schema, raw, tally, `${source} record ${i}`);
  // One field at a time made awkward, on the first two records the schema accepts as they are.
  const accepted = records.filter((raw) => schema.safeParse(raw).success).slice(0, 2);
  for (const [i, raw] of accepted.entries()) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) continue;
    for (const key of Object.keys(raw)) {
      for (const value of AWKWARD) {
        const mutated: Record<string, unknown> = { ...(raw as Record<string, unknown>), [key]: value };
        if (value === undefined) delete mutated[key];
        same(schema, mutated, { fast: 0, zod: 0 }, `${source} record ${i} with ${key} = ${String(value)}`);
      }
    }
  }
  return tally;
}

// Record schemas made by recordSchema have a fast lane; point tuples (series, visitors) go through zod.
const withRecords = OPERATIONS.filter((op) => op.records && op.format !== "text" && fastParserOf(op.records.schema as z.ZodType));

describe("the fast lane of record parsing gives zod's output or steps aside", () => {
  let sb: Sandbox;
  let groupKey = "";
  beforeAll(async () => {
    sb = await startSandbox({ seed: 3, now: () => Date.UTC(2025, 0, 15, 12, 0), burstKeys: 50 });
    const groups = await callSandbox(sb, "account.groups");
    groupKey = (groups.json as { data: { groupKey: string }[] }).data[0]!.groupKey;
  });
  afterAll(() => sb.stop());

  it("covers the record-shaped operations, the statistics and range records among them", () => {
    const ids = withRecords.map((op) => op.id);
    for (const id of [...STAT_TYPES.map((t) => `stat.${t}`), "range.exception", "project.event_history"]) expect(ids).toContain(id);
  });

  it("on every record of the docs samples, and on each with one field made awkward", () => {
    const files = [...readdirSync(SAMPLES).map((f) => f), ...readdirSync(join(SAMPLES, "oldver")).map((f) => `oldver/${f}`)].filter(
      (f) => f.endsWith(".json") && !f.includes(".request."),
    );
    const total: Tally = { fast: 0, zod: 0 };
    for (const file of files) {
      const body = parseJson(readFileSync(join(SAMPLES, file), "utf8"));
      for (const op of withRecords) {
        const records = recordsOf(op, body);
        if (records.length === 0) continue;
        const t = check(op, records, `${file} as ${op.id}`);
        total.fast += t.fast;
        total.zod += t.zod;
      }
    }
    // Both lanes are exercised: clean records go fast, the docs' broken ones go to zod.
    expect(total.fast).toBeGreaterThan(100);
    expect(total.zod).toBeGreaterThan(0);
  }, 60_000);

  it.each(withRecords.filter((op) => op.inSpec).map((op) => [op.id, op] as const))(
    "%s: on a sandbox answer, every record goes fast",
    async (_id, op) => {
      const res = await callSandbox(sb, op.id, paramsFor(op, sb, groupKey));
      expect(res.status, res.text).toBe(200);
      const records = recordsOf(op, parseJson(res.text));
      const t = check(op, records, `sandbox ${op.id}`);
      expect(t.zod, `${op.id}: records of the sandbox that only zod took`).toBe(0);
    },
  );
});
