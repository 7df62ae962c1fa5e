// A windowed table's migration is generated, not hand-edited (jobs/db-generate.ts): the CREATE TABLE
// drizzle-kit wrote for a table declared partitioned gets PARTITION BY RANGE on its column, and the
// statement runs on Postgres as a partitioned table with no default partition; other statements and
// tables are left as they are, and a second pass changes nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import drizzleConfig from "../../drizzle.config.ts";
import { withPartitionClauses } from "../../src/db/partitions/partitionedDdl.ts";
import { partitionedTables } from "../../src/db/tables.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const BREAK = "--> statement-breakpoint";
const partitioned = new Map(partitionedTables().map((t) => [t.name, t.partitionColumn]));

/** What drizzle-kit generates for today's schema into an empty folder: every table's CREATE TABLE. */
function generateAll(): string {
  const out = mkdtempSync(join(tmpdir(), "apm-drizzle-"));
  try {
    const kit = join(process.cwd(), "node_modules", "drizzle-kit", "bin.cjs");
    // The schema files drizzle.config.ts names, as one brace glob: drizzle-kit keeps only the last
    // of several --schema flags.
    const files = [drizzleConfig.schema ?? []].flat();
    const args = ["generate", "--dialect", "postgresql", "--schema", `{${files.join(",")}}`, "--out", out];
    const run = spawnSync(process.execPath, [kit, ...args], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const [file] = readdirSync(out).filter((f) => f.endsWith(".sql"));
    return readFileSync(join(out, file!), "utf8");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

let db: TestDatabase;
let generated: string;
beforeAll(async () => {
  generated = generateAll();
  db = await createTestDatabase({ migrated: false });
}, 60_000);
afterAll(async () => db?.drop());

describe("generated migrations of partitioned tables", () => {
  it("close each declared table's CREATE TABLE with PARTITION BY RANGE, and nothing else changes", () => {
    const out = withPartitionClauses(generated, partitioned);
    const before = generated.split(BREAK);
    const after = out.split(BREAK);
    expect(after).toHaveLength(before.length);
    let changed = 0;
    for (const [i, statement] of after.entries()) {
      const table = /CREATE TABLE "([^"]+)"/.exec(statement)?.[1];
      if (table && partitioned.has(table)) {
        changed++;
        expect(statement.trimEnd()).toMatch(new RegExp(`\\) PARTITION BY RANGE \\("${partitioned.get(table)}"\\);$`));
      } else expect(statement).toBe(before[i]);
    }
    expect(changed).toBe(partitioned.size);
    expect(withPartitionClauses(out, partitioned)).toBe(out);
  });

  it("the generated statements run: each declared table partitioned on its column, no default partition", async () => {
    const statements = withPartitionClauses(generated, partitioned)
      .split(BREAK)
      .filter((s) => /^\s*CREATE TABLE/.test(s));
    await db.sql.unsafe('CREATE SCHEMA IF NOT EXISTS "apm"');
    for (const s of statements) await db.sql.unsafe(s);
    const rows = await db.sql<{ name: string; col: string; defaults: number }[]>`
      SELECT c.relname AS name, a.attname::text AS col, p.partdefid::int AS defaults FROM pg_partitioned_table p
      JOIN pg_class c ON c.oid = p.partrelid JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
      WHERE c.relnamespace = current_schema()::regnamespace AND p.partstrat = 'r'`;
    expect(rows.map((r) => [r.name, r.col]).sort()).toEqual([...partitioned].sort());
    for (const r of rows) expect(r.defaults).toBe(0);
  });
});
