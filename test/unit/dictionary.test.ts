// The data dictionary (issue 18 item 4): every table and column described, no stale entry, the
// API field of a column is the one the parser reads, and docs/warehouse.md is the command's output.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../jobs/schema.ts";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { tableNames } from "../../src/db/tables.ts";
import { dictionaryComments } from "../../src/dictionary/comments.ts";
import { DICTIONARY, staleEntries, UNDESCRIBED } from "../../src/dictionary/index.ts";
import { snakeCase } from "../../src/kernel/record.ts";
import { packageRoot } from "../../src/util/package-root.ts";
import { STREAM_COLUMNS } from "../support/stream-columns.ts";

async function schema(opts: Record<string, unknown>): Promise<{ code: number; text: string }> {
  let text = "";
  const code = await run(opts, {}, { write: (chunk: string) => (text += chunk) });
  return { code, text };
}

const relation = (name: string) => DICTIONARY.find((r) => r.name === name)!;

describe("data dictionary", () => {
  it("describes every table and column of the drizzle schema, and every view it lists", () => {
    const missing = DICTIONARY.flatMap((r) => [
      ...(r.description === "" || r.group === UNDESCRIBED ? [r.name] : []),
      ...r.columns.filter((c) => c.description.trim() === "").map((c) => `${r.name}.${c.name}`),
    ]);
    // Add the entry in the table's stream family (src/catalogue: docEntry beside the table).
    expect(missing).toEqual([]);
    expect(DICTIONARY.map((r) => r.name)).toEqual(expect.arrayContaining(tableNames()));
    expect(DICTIONARY.filter((r) => r.kind === "view").map((r) => r.name)).toEqual(
      expect.arrayContaining(["stat_transaction_hourly", "stat_remote_daily", "stream_freshness", "ledger_gaps"]),
    );
  });

  it("has no entry for a table or column that does not exist", () => {
    expect(staleEntries()).toEqual([]);
  });

  it("names, for each stream table, the catalogue operations that fill it", () => {
    for (const op of OPERATIONS.filter((o) => o.stream)) {
      expect(relation(op.stream!.table).operations, op.id).toContainEqual({ id: op.id, method: op.method, path: op.path });
    }
    expect(relation("scalar_values").operations).toHaveLength(11);
    expect(relation("sync_windows").operations).toEqual([]);
  });

  it("gives each column the parser fills the API field it reads, spelled so that it maps to the column", () => {
    const wrong: string[] = [];
    for (const [table, keys] of Object.entries(STREAM_COLUMNS)) {
      const rename = Object.fromEntries(
        OPERATIONS.filter((o) => o.stream?.table === table).flatMap((o) => Object.entries(o.stream!.rename ?? {})),
      );
      for (const key of keys.filter((k) => k !== "extra")) {
        const column = rename[key] ?? key;
        const doc = relation(table).columns.find((c) => c.name === column);
        // A key with no column lands in extra; a shared column (pcode) says where its value comes from.
        if (!doc || doc.shared) continue;
        if (!doc.field) {
          if (!["metric", "metric_type", "granularity", "time_merge"].includes(column)) wrong.push(`${table}.${column}: no field`);
          continue;
        }
        // "eventTitle / event_title": either spelling; "series[i][0]" and the like are positions, not names.
        const names = doc.field.split(" / ").filter((f) => /^[A-Za-z_.]+$/.test(f));
        const mapsTo = (name: string) =>
          (rename[snakeCase(name)] ?? snakeCase(name)) === column || doc.conversion?.includes(`renamed ${name} -> ${column}`);
        for (const name of names) if (!mapsTo(name)) wrong.push(`${table}.${column}: ${name}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("says how a time read from the API was converted", () => {
    const silent = DICTIONARY.flatMap((r) =>
      r.columns.filter((c) => c.field && c.type === "timestamp with time zone" && !c.conversion).map((c) => `${r.name}.${c.name}`),
    );
    expect(silent).toEqual([]);
    const hashes = DICTIONARY.flatMap((r) => r.columns.filter((c) => /hash$/i.test(c.field ?? "") && c.type !== "bigint"));
    expect(hashes).toEqual([]);
  });

  it("says 'not documented' where the spec gives no meaning or unit", () => {
    const timeSum = relation("stat_transaction").columns.find((c) => c.name === "time_sum")!;
    expect(timeSum.unit).toBe("not documented");
    expect(timeSum.description).toContain("not documented");
    const rtime = relation("spot_values").columns.find((c) => c.name === "rtime")!;
    expect([rtime.unit, rtime.conversion]).toEqual(["ms", 'sent as a string ("600.0"), stored as a number']);
  });
});

describe("apm-sync schema", () => {
  it("--markdown is docs/warehouse.md", async () => {
    const { code, text } = await schema({ markdown: true });
    expect(code).toBe(0);
    const file = readFileSync(join(packageRoot(), "docs", "warehouse.md"), "utf8");
    // On failure: regenerate with `npm run -s cli -- schema --markdown > docs/warehouse.md` and commit it.
    expect(file, "docs/warehouse.md is stale: npm run -s cli -- schema --markdown > docs/warehouse.md").toBe(text);
    for (const r of DICTIONARY) expect(text).toContain(`### \`${r.name}\``);
  });

  it("--json is valid JSON with every relation, column and comment", async () => {
    const { code, text } = await schema({ json: true });
    expect(code).toBe(0);
    const parsed = JSON.parse(text) as {
      relations: { name: string; comment: string; columns: { name: string; type: string; comment: string }[] }[];
    };
    expect(parsed.relations.map((r) => r.name)).toEqual(DICTIONARY.map((r) => r.name));
    const comments = parsed.relations.flatMap((r) => [
      { relation: r.name, column: null, text: r.comment },
      ...r.columns.map((c) => ({ relation: r.name, column: c.name, text: c.comment })),
    ]);
    expect(comments).toEqual(dictionaryComments());
    const tx = parsed.relations.find((r) => r.name === "stat_transaction")!;
    expect(tx.columns.find((c) => c.name === "service_hash")).toMatchObject({ type: "bigint", field: "serviceHash" });
  });

  it("prints every comment as plain text by default; refuses --markdown with --json", async () => {
    const { code, text } = await schema({});
    expect(code).toBe(0);
    for (const t of dictionaryComments()) expect(text).toContain(t.text);
    expect(text).toMatch(/^ {2}time_sum\s+double precision\s+Sum of the response times/m);
    expect((await schema({ markdown: true, json: true })).code).toBe(2);
  });
});
