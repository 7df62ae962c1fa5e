// Text the database cannot hold (NUL, unpaired surrogates; issue 21) in a real answer of the
// sandbox, written by the engine's window writer on both databases: every good record is stored,
// the odd values with U+FFFD and their originals in extra._original, sums exact, the quarantined
// record kept with its original text, and an error text full of control bytes in the ledger.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnvelope } from "../../src/api/parse-response.ts";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { ensureWritePartitions } from "../../src/db/partitions/ensureWritePartitions.ts";
import { emptyWindowFetch } from "../../src/engine/fetch-window.ts";
import { projectTarget } from "../../src/engine/targets.ts";
import { recordFailedWindow, writeWindows } from "../../src/engine/write-window.ts";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";
import { parseJson } from "../../src/schemas/json.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { pageOf } from "../support/pages.ts";
import { paramsFor, T } from "../support/sandbox-params.ts";

const H = 3_600_000;
const op = OPERATIONS.find((o) => o.id === "stat.transaction")!;
const LONE = "\ud83d";

/** A sandbox answer with odd text put in: each change as the JSON text on the wire carries it. */
async function oddAnswer(sb: Sandbox): Promise<{ body: unknown; services: number; sum: number }> {
  const res = await callSandbox(sb, op.id, paramsFor(op, sb, ""));
  const body = parseJson(res.text) as { data: Record<string, unknown>[] };
  const [r0, r1, r2, r3] = body.data;
  r0!.service = "a\u0000b";
  r1!.service = `lone ${LONE} high`;
  r2!.surprise = "x\u0000";
  // Refused by the schema: quarantined, with its NUL.
  r3!.count = "many\u0000";
  const text = JSON.stringify(body);
  expect(text).toContain("\\u0000");
  const good = body.data.filter((r) => r !== r3);
  return { body: text, services: good.length, sum: good.reduce((n, r) => n + Number(r.count), 0) };
}

describe.each(DATABASES)("text the database cannot hold, on %s", (kind) => {
  let t: OpenedDatabase;
  let sb: Sandbox;
  beforeAll(async () => {
    [t, sb] = await Promise.all([openTestDatabase(kind), startSandbox({ seed: 5, now: () => T + 24 * H, burstKeys: 0 })]);
  });
  afterAll(async () => {
    sb?.stop();
    await t?.drop();
  });

  it("writes every good record, replaced values kept in extra._original, sums exact", async () => {
    const pcode = sb.projects[0]!.pcode;
    const answer = await oddAnswer(sb);
    const page = await pageOf(op, answer.body);
    const leaf = {
      start: T,
      end: T + H,
      truncated: false,
      expected: null,
      fetched: page.records.count,
      page,
      envelope: parseEnvelope(op, page),
    };
    const target = projectTarget(op, pcode);
    const fetched = { ...emptyWindowFetch(), leaves: [leaf], requests: 1 };
    // As the engine does: the window's months first (in the table and its rollups), then its transaction.
    await ensureWritePartitions(t.sql, target.stream.table, [T]);
    const written = await t.sql.begin((tx) =>
      writeWindows(tx, target, [{ window: { start: T, end: T + H }, fetched, early: null }], 7, () => null),
    );
    expect(written).toEqual([{ rows: answer.services, quarantined: 1, truncated: 0, replaced: 4 }]);
    const [agg] = await t.sql`select count(*)::int as n, sum(count)::float8 as total from stat_transaction where pcode = ${pcode}`;
    expect(agg).toEqual({ n: answer.services, total: answer.sum });
    const odd = await t.sql<{ service: string; extra: Record<string, unknown> }[]>`
      select service, extra from stat_transaction where pcode = ${pcode} and extra ? '_original'
      order by extra->'_original'->>'service' nulls last`;
    expect(odd.map((r) => [r.service, r.extra._original])).toEqual([
      ["a\uFFFDb", { service: "a\\u0000b" }],
      ["lone \uFFFD high", { service: "lone \\ud83d high" }],
      [expect.stringMatching(/^\//), { surprise: "x\\u0000" }],
    ]);
    expect(odd[2]!.extra.surprise).toBe("x\uFFFD");
    // The original, exactly, from its escaped form.
    const [back] = await t.sql<{ original: string }[]>`
      select extra->'_original'->>'service' as original from stat_transaction where pcode = ${pcode} and service = ${"a\uFFFDb"}`;
    expect(JSON.parse(`"${back!.original}"`)).toBe("a\u0000b");
    const [q] = await t.sql<{ raw: Record<string, unknown>; raw_text: string; reason: string }[]>`
      select raw, raw_text, reason from quarantine where stream = ${op.id} and pcode = ${pcode}`;
    expect(q!.raw.count).toBe("many\uFFFD");
    expect((JSON.parse(q!.raw_text) as Record<string, unknown>).count).toBe("many\u0000");
    expect(q!.reason).not.toContain("\u0000");
  });

  it("records a failed window whose error holds NUL and control bytes, escaped", async () => {
    const pcode = sb.projects[1]!.pcode;
    const error = `body is not JSON: \u001f\u008b\u0000\u0008 bomb \u001b[31m ${LONE}`;
    await t.sql.begin((tx) =>
      recordFailedWindow(tx, projectTarget(op, pcode), { start: T, end: T + H }, error, { requests: 1, retries: 0 }, 7),
    );
    const [row] = await t.sql`select status, error from sync_windows where stream = ${op.id} and pcode = ${pcode}`;
    expect(row).toEqual({ status: "failed", error: "body is not JSON: \\u001f\u008b\\u0000\\u0008 bomb \\u001b[31m \\ud83d" });
  });
});
