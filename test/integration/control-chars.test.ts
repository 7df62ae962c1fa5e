// A server whose records carry keys and values full of terminal control sequences (an OSC that
// sets the window title, CSI as ESC [ and as the single byte 0x9B, BEL, DEL, CR, a newline that
// would forge a log line). The real `check` shows the keys it found, and a sync logs the schema
// problem it met: every line printed or logged shows those characters as escapes, `check --json`
// gives the keys back exactly, and the records land in the database as sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, runCli } from "../support/child-sync.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { HOUR } from "../support/engine-harness.ts";
import { type RecordedRequest, reply, startServer, type TestServer } from "../support/http-server.ts";

const PCODE = 12;
const TOKEN = "ctl-T0KEN-12-aa01";
const OSC = "\u001b]0;pwned\u0007";
const KEYS = [`title${OSC}`, "clear\u009b2J", "line\nFAKE INFO all good", "back\rover", "del\u007f", "bidi\u202eevil"];
const SERVICE = `svc\u001b[31mred\u001b[0m`;
const BAD_COUNT = "\u009b6n\u001b[2J";

// Every control character a terminal acts on; a newline is ours to print, never the server's.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** One good record carrying the hostile keys, one whose count is a control sequence (quarantined). */
function statAnswer(req: RecordedRequest, envelopeLie: boolean) {
  const { stime, etime } = JSON.parse(req.body) as { stime: number; etime: number };
  const record = { serviceHash: 7, service: SERVICE, count: 3, error: 0, ...Object.fromEntries(KEYS.map((k, i) => [k, i])) };
  const data = [record, { serviceHash: 8, count: BAD_COUNT }];
  return { stime, etime, total: envelopeLie ? BAD_COUNT : 2, retrievedTotal: 2, data };
}

describe("control characters from the server never reach a terminal", () => {
  let server: TestServer;
  let db: TestDatabase;
  let envelopeLie = false;
  const NOW = Math.floor(Date.now() / HOUR) * HOUR;
  const env = () =>
    cliEnv({
      baseUrl: server.url,
      databaseUrl: db.url,
      projects: [{ pcode: PCODE, token: TOKEN }],
      extra: { APM_RETRIES: "0", APM_START: new Date(NOW - 3 * HOUR).toISOString() },
    });
  const backfill = ["backfill", "--from", new Date(NOW - 3 * HOUR).toISOString(), "--to", new Date(NOW - 2 * HOUR).toISOString()];

  beforeAll(async () => {
    server = await startServer((req, res) => {
      if (!req.url.startsWith("/open/api/v2/stat/transaction")) return reply(res, 404, "{}");
      reply(res, 200, JSON.stringify(statAnswer(req, envelopeLie)));
    });
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it("check prints the keys the server added, escaped; --json gives them back exactly", async () => {
    const text = await runCli(["check", "--streams", "stat.transaction"], env());
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(CONTROL);
    expect(text.stderr).not.toMatch(CONTROL);
    const row = text.stdout.split("\n").find((l) => l.startsWith("stat.transaction"));
    expect(row).toContain("+title\\u001b]0;pwned\\u0007");
    expect(row).toContain("+clear\\u009b2J");
    expect(row).toContain("+line\\u000aFAKE INFO all good");
    expect(row).toContain("+bidi\\u202eevil");
    expect(row).toMatch(/1 quarantined \(count: expected .*\\u009b6n/);
    expect(text.stdout).not.toMatch(/^FAKE/m);

    const json = await runCli(["check", "--streams", "stat.transaction", "--json"], env());
    expect(json.stdout).not.toMatch(CONTROL);
    const [op] = (JSON.parse(json.stdout) as { operations: { drift: { unknownFields: string[] } }[] }).operations;
    expect(op!.drift.unknownFields).toEqual([...KEYS].sort());
  }, 60_000);

  it("a sync's log lines (plain and JSON) escape them; the database keeps the data as sent", async () => {
    const plain = await runCli([...backfill, "--streams", "stat.transaction"], env());
    expect(plain.code, plain.stderr).toBe(0);
    const [row] = await db.sql<{ service: string; extra: Record<string, number> }[]>`SELECT service, extra FROM stat_transaction`;
    expect(row!.service).toBe(SERVICE);
    expect(Object.keys(row!.extra).sort()).toEqual([...KEYS].sort());

    // The envelope lies: the window fails with a schema error quoting the value, logged.
    envelopeLie = true;
    for (const format of ["plain", "json"]) {
      // --refetch: the window is done, and a backfill skips done windows otherwise.
      const failed = await runCli([...backfill, "--streams", "stat.transaction", "--refetch"], { ...env(), APM_LOG_FORMAT: format });
      expect(failed.code).toBe(1);
      expect(failed.stderr).not.toMatch(CONTROL);
      expect(failed.stderr).toMatch(/does not match its schema: total: .*\\u009b6n/);
      if (format === "json") for (const line of failed.stderr.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
    }
    const [ledger] = await db.sql<{ error: string }[]>`SELECT error FROM sync_windows WHERE status = 'failed'`;
    expect(ledger!.error).not.toMatch(CONTROL);
    envelopeLie = false;
  }, 90_000);
});
