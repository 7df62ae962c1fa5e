// Conformance: for every in-spec operation with a documented sample in test/fixtures/api-samples, the
// sandbox answers with the same key set and JSON types, recursively (array elements against the
// sample's first element), except for the variants listed in VARIANTS.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import type { OperationDef } from "../../src/catalogue/types.ts";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { fixturePath } from "../support/fixtures.ts";
import { paramsFor } from "../support/sandbox-params.ts";

const SAMPLES = fixturePath("api-samples");
const NOW = Date.UTC(2025, 0, 15, 12, 0);

/** How a sample file is named from an operation's method and path, where the docs differ. */
function samplePath(op: OperationDef): string {
  // The docs name metric series with the {metric_type} placeholder instead of each metric.
  if (op.area === "series") return op.path.replace(/^\/open\/api\/json\/\w+\//, "/open/api/json/{metric_type}/");
  // The spec names /open/api/v2/json/groups; the docs sample is filed under /open/api/json/groups.
  if (op.id === "account.groups") return "/open/api/json/groups";
  return op.path;
}

/** Allowed, documented differences between the docs samples and the sandbox. */
const VARIANTS = {
  /** Sample files that are not a response shape the sandbox must produce. */
  skipFiles: [
    /\.request\.json$/, // request bodies, not responses
    /_project\.server\.json$/, // server-product project detail: the sandbox's projects are APM products
  ],
  /** Compare array elements against this sample element instead of the first. */
  elementIndex: {
    // Element 0 of the event-history sample carries YAML artefacts of the docs ("0,", "44,").
    "project.event_history": 1,
  } as Record<string, number>,
  /** JSON path -> extra allowed types (documented mixed forms). */
  types: [
    { op: "project.event_history", path: "$[].pcode", allow: ["string", "number"] }, // "7" in one event, 7 in the next
    { op: /^scalar\./, path: "$", allow: ["string", "number"] }, // bare 93.07 or a quoted "66.0"
  ] as { op: string | RegExp; path: string; allow: string[] }[],
};

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

function allowed(opId: string, path: string): string[] | null {
  const v = VARIANTS.types.find((t) => (typeof t.op === "string" ? t.op === opId : t.op.test(opId)) && t.path === path);
  return v ? v.allow : null;
}

/** Differences in key sets and JSON types between a sample and an actual value. */
export function shapeDiff(opId: string, sample: unknown, actual: unknown, path = "$", out: string[] = []): string[] {
  const ts = typeOf(sample);
  const ta = typeOf(actual);
  const ok = allowed(opId, path);
  if (ok) {
    if (!ok.includes(ta)) out.push(`${path}: ${ta} not in ${ok.join("|")}`);
    return out;
  }
  if (ts !== ta) {
    out.push(`${path}: sample ${ts}, sandbox ${ta}`);
    return out;
  }
  if (ts === "array") {
    const s = sample as unknown[];
    const a = actual as unknown[];
    // An empty sample array says nothing about its elements; a non-empty one must be matched by data.
    if (s.length === 0) return out;
    if (a.length === 0) out.push(`${path}: sandbox array is empty, sample is not`);
    const ref = s[path === "$" ? (VARIANTS.elementIndex[opId] ?? 0) : 0];
    a.forEach((el, i) => {
      if (i < 50) shapeDiff(opId, ref, el, `${path}[]`, out);
    });
  } else if (ts === "object") {
    const s = sample as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const sk = Object.keys(s).sort();
    const ak = Object.keys(a).sort();
    if (sk.join() !== ak.join()) out.push(`${path}: keys differ: sample [${sk}] sandbox [${ak}]`);
    for (const k of sk) if (k in a) shapeDiff(opId, s[k], a[k], `${path}.${k}`, out);
  }
  return out;
}

function samplesOf(op: OperationDef, files: readonly string[]): string[] {
  const base = `${op.method}__${samplePath(op).slice(1).replaceAll("/", "_")}`;
  return files.filter(
    (f) => (f === `${base}.json` || (f.startsWith(`${base}.`) && f.endsWith(".json"))) && !VARIANTS.skipFiles.some((r) => r.test(f)),
  );
}

describe("sandbox conformance with the documented samples", () => {
  let sb: Sandbox;
  let groupKey = "";
  const files = readdirSync(SAMPLES).filter((f) => f.endsWith(".json"));

  beforeAll(async () => {
    sb = await startSandbox({ seed: 3, now: () => NOW, burstKeys: 50 });
    const groups = await callSandbox(sb, "account.groups");
    groupKey = (groups.json as { data: { groupKey: string }[] }).data[0]!.groupKey;
  });
  afterAll(() => sb.stop());

  it("finds a sample for every in-spec operation except the undocumented ones", () => {
    const without = OPERATIONS.filter((op) => op.inSpec && samplesOf(op, files).length === 0).map((op) => op.id);
    // No samples exist for the v2 statistics and the filtered call statistics (test/fixtures/api-samples/README.md).
    expect(without.sort()).toEqual([
      "calls.tx_caller",
      "calls.tx_domain",
      "stat.error",
      "stat.httpc",
      "stat.remote",
      "stat.sql",
      "stat.transaction",
    ]);
  });

  const inSpec = OPERATIONS.filter((op) => op.inSpec);
  it.each(inSpec.map((op) => [op.id, op] as const))("%s: same keys and JSON types as the sample", async (_id, op) => {
    const res = await callSandbox(sb, op.id, paramsFor(op, sb, groupKey));
    expect(res.status, res.text).toBe(200);
    expect(res.json, `${op.id} body must be JSON (or a JSON scalar)`).not.toBeUndefined();
    if (op.format === "text") expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    for (const file of samplesOf(op, files)) {
      const sample: unknown = JSON.parse(readFileSync(join(SAMPLES, file), "utf8"));
      expect({ file, diff: shapeDiff(op.id, sample, res.json) }).toEqual({ file, diff: [] });
    }
  });

  it("the comparison catches a renamed key, a type change and an empty array", () => {
    const sample = { a: 1, b: [{ c: "x" }] };
    expect(shapeDiff("x", sample, { a: 1, b: [{ c: "y" }] })).toEqual([]);
    expect(shapeDiff("x", sample, { a: "1", b: [{ c: "y" }] })).toEqual(["$.a: sample number, sandbox string"]);
    expect(shapeDiff("x", sample, { a: 1, b: [{ C: "y" }] })[0]).toContain("keys differ");
    expect(shapeDiff("x", sample, { a: 1, b: [] })).toEqual(["$.b: sandbox array is empty, sample is not"]);
  });
});
