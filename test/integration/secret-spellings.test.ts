// A server that quotes the token back in an error body, spelled another way: upper-cased,
// URL-encoded, JSON-escaped, inside a longer base64 text (each byte alignment), cut short where
// the body ends or in its middle (all but its last two characters, then more text; its last
// characters only), or across the 300th character where the client cuts its snippet. Through the
// real CLI (a backfill, one window per spelling, then `status`, `status --json` and `report`), no
// piece of any spelling may reach stderr, the ledger's error column, any text of the database,
// status or the report.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildExit, cliEnv, runCli } from "../support/child-sync.ts";
import { HOUR } from "../support/engine-harness.ts";
import { reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";

const TOKEN = "Proj-T0ken-12-b81e44zq";
const PCODE = 12;

const percent = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
// Every other character escaped, the others as they are.
const mixed = (spell: (c: string) => string) => [...TOKEN].map((c, i) => (i % 2 === 0 ? spell(c) : c)).join("");
const jsonEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * The token inside a longer base64 text, `before` bytes in (its alignment is `before` mod 3);
 * `spelled` is the part of the text that changes with the token (compared with zero bytes there).
 */
function base64Of(before: number): { text: string; spelled: string } {
  const encode = (token: Buffer) => Buffer.concat([Buffer.from("session:".repeat(3).slice(0, before)), token, Buffer.from(";exp=1")]);
  const text = encode(Buffer.from(TOKEN)).toString("base64");
  const blank = encode(Buffer.alloc(TOKEN.length)).toString("base64");
  const changed = [...text].flatMap((c, i) => (c !== blank[i] ? [i] : []));
  return { text, spelled: text.slice(changed[0], changed[changed.length - 1]! + 1) };
}

interface Spelling {
  readonly name: string;
  /** The body the server answers (HTTP 500). */
  readonly body: string;
  /** What of the token the body holds, as written there: no 6 characters of it may come out. */
  readonly spelled: string;
}

const b64 = [0, 1, 2].map(base64Of);
const SPELLINGS: Spelling[] = [
  { name: "upper-cased", body: `{"msg":"token ${TOKEN.toUpperCase()} is not valid here"}`, spelled: TOKEN.toUpperCase() },
  { name: "URL-encoded", body: `<a href="/login?token=${mixed(percent)}&next=%2F">again</a>`, spelled: mixed(percent) },
  { name: "fully URL-encoded", body: `redirect: /login?token=${percent(TOKEN)}`, spelled: percent(TOKEN) },
  { name: "JSON-escaped", body: `{"msg":"bad token ${mixed(jsonEscape)}","code":500}`, spelled: mixed(jsonEscape) },
  ...b64.map((b, i) => ({ name: `base64, byte alignment ${i}`, body: `{"trace":"${b.text}"}`, spelled: b.spelled })),
  { name: "cut short at the end of the body", body: `{"msg":"refused: token ${TOKEN.slice(0, 9)}`, spelled: TOKEN.slice(0, 9) },
  {
    name: "all but its last two characters, followed by more text",
    body: `{"msg":"token ${TOKEN.slice(0, -2)} is not valid for this project","code":500}`,
    spelled: TOKEN.slice(0, -2),
  },
  { name: "its last characters, after more text", body: `{"msg":"key=..${TOKEN.slice(3)}; refused"}`, spelled: TOKEN.slice(3) },
  { name: "across the 300th character", body: `${"x".repeat(290)} token ${TOKEN} refused`, spelled: TOKEN },
];

const NOW = Math.floor(Date.now() / HOUR) * HOUR;
const FROM = NOW - (SPELLINGS.length + 2) * HOUR;
const TO = FROM + SPELLINGS.length * HOUR;

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const html = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** Every text, JSON and array value of every table of the warehouse, one per line. */
async function everyText(sql: postgres.Sql): Promise<string> {
  const columns = await sql<{ table: string; column: string }[]>`
    SELECT table_name AS table, column_name AS column FROM information_schema.columns
    WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY')`;
  const texts: string[] = [];
  for (const { table, column } of columns) {
    const rows = await sql<{ t: string | null }[]>`SELECT string_agg(${sql(column)}::text, E'\n') AS t FROM ${sql(table)}`;
    texts.push(rows[0]!.t ?? "");
  }
  return texts.join("\n");
}

/** Pieces of `spelled` (6 characters each, case ignored) found in `text`. */
function leaks(text: string, spelled: string): string[] {
  const lower = text.toLowerCase();
  const pieces = Array.from({ length: spelled.length - 5 }, (_, i) => spelled.slice(i, i + 6).toLowerCase());
  return [...new Set(pieces.filter((p) => lower.includes(p)))];
}

describe("every spelling of the token is masked (real CLI, a server quoting it)", () => {
  const t = useServerAndDatabase((req, res) => {
    if (!req.url.startsWith("/open/api/v2/stat/transaction")) return reply(res, 404, "{}");
    const { stime } = JSON.parse(req.body) as { stime: number };
    reply(res, 500, SPELLINGS[(stime - FROM) / HOUR]?.body ?? "{}");
  });
  const out = {} as {
    backfill: ChildExit;
    status: string;
    statusText: string;
    report: string;
    errors: Map<number, string>;
    database: string;
  };
  const dir = mkdtempSync(join(tmpdir(), "apm-secret-"));

  beforeAll(async () => {
    const env = cliEnv({
      baseUrl: t.server.url,
      databaseUrl: t.db.url,
      projects: [{ pcode: PCODE, token: TOKEN }],
      extra: { APM_RETRIES: "0", APM_START: new Date(FROM).toISOString() },
    });
    const range = ["--from", new Date(FROM).toISOString(), "--to", new Date(TO).toISOString(), "--streams", "stat.transaction"];
    out.backfill = await runCli(["backfill", ...range], env);
    const status = await runCli(["status", "--json"], env);
    expect(status.code, status.stderr).toBe(0);
    out.status = status.stdout;
    const statusText = await runCli(["status"], env);
    expect(statusText.code, statusText.stderr).toBe(0);
    out.statusText = statusText.stdout;
    const report = await runCli(["report", "--out", join(dir, "report.html")], env);
    expect(report.code, report.stderr).toBe(0);
    out.report = readFileSync(join(dir, "report.html"), "utf8");
    const rows = await t.db.sql<{ s: number; error: string }[]>`
      SELECT (extract(epoch from window_start) * 1000)::float8 AS s, error FROM sync_windows WHERE status = 'failed'`;
    out.errors = new Map(rows.map((r) => [r.s, r.error]));
    out.database = await everyText(t.db.sql);
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ran every window against the server: each failed with its body", () => {
    expect(out.backfill.code, out.backfill.stderr).toBe(1);
    const sent = t.server.requests.filter((r) => r.url.startsWith("/open/api/v2/stat/transaction"));
    expect(sent.map((r) => r.headers["x-service-token"])).toEqual(SPELLINGS.map(() => TOKEN));
    expect(out.errors.size).toBe(SPELLINGS.length);
    // The texts searched for leaks hold the (masked) errors.
    for (const error of out.errors.values()) expect(out.database).toContain(error);
    expect(out.statusText).toContain("HTTP 500: ");
  });

  it.each(SPELLINGS.map((s, i) => [s.name, s, i] as const))("%s", (_name, spelling, i) => {
    const error = out.errors.get(FROM + i * HOUR)!;
    const window = `window ${new Date(FROM + i * HOUR).toISOString()}..`;
    const stderr = out.backfill.stderr.split("\n").filter((l) => l.includes(window));
    expect(stderr).toHaveLength(1);
    const outputs = {
      ledger: error,
      stderr: stderr[0]!,
      status: out.statusText,
      "status --json": out.status,
      report: out.report,
      database: out.database,
    };
    const found = Object.entries(outputs).flatMap(([where, text]) => leaks(text, spelling.spelled).map((piece) => `${where}: ${piece}`));
    expect(found).toEqual([]);
    // The error came through, masked: the checks above looked at it.
    expect(error).toMatch(/^HTTP 500: .*\*\*\*/);
    const shown = error.slice(0, error.indexOf("***") + 3);
    expect(stderr[0]).toContain(shown);
    expect(out.status).toContain(JSON.stringify(shown).slice(1, -1));
    expect(out.report).toContain(html(shown));
  });

  it("status masks a token in a ledger row an older release wrote unmasked, and escapes its control characters", async () => {
    const old = `HTTP 500: {"msg":"token ${TOKEN} / ${TOKEN.toUpperCase()}\u009b2J"}`;
    await t.db.sql`UPDATE sync_windows SET error = ${old} WHERE window_start = ${new Date(FROM)}`;
    const env = cliEnv({ baseUrl: t.server.url, databaseUrl: t.db.url, projects: [{ pcode: PCODE, token: TOKEN }] });
    for (const args of [["status"], ["status", "--json"]]) {
      const status = await runCli(args, env);
      expect(status.code, status.stderr).toBe(0);
      expect(leaks(status.stdout, TOKEN)).toEqual([]);
      expect(status.stdout).toContain("token *** / ***");
      expect(status.stdout).not.toMatch(/\u009b/);
    }
  });
});
