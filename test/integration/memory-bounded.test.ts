// Memory bounded by design (issue 31 item 3), through the README's command (`npm run cli -- sync`,
// with its heap limit): statistics pages of 80,000 records (about 40 MB each, under the 64 MiB
// body cap) at APM_CONCURRENCY=16 end with exit 0, every record stored, and a peak RSS under
// 256 MiB. The server streams its pages, so the test process holds none of them either.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPeaks } from "../../jobs/peak-rss-lines.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const RECORDS = 80_000;
const PROJECTS = [7001, 7002];
const LIMIT_KIB = 256 * 1024;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PRELOAD = fileURLToPath(new URL("../../jobs/peak-rss.mjs", import.meta.url));

/** Record i of a window: a count the test can sum, padded to about 500 bytes as real ones are. */
const count = (i: number) => (i % 7) + 1;
const PAD = "x".repeat(420);
function record(i: number): string {
  const c = count(i);
  return `{"serviceHash":${i - 40_000},"service":"/svc/${i}/${PAD}","count":${c},"error":0,"timeSum":${c * 3},"timeMin":1,"timeMax":9,"timeAvg":3}`;
}
const EXPECTED_SUM = Array.from({ length: RECORDS }, (_, i) => count(i)).reduce((a, b) => a + b, 0);

/** Answers every statistics window with RECORDS records, written in pieces with backpressure. */
function bigPages(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", async () => {
      const { stime, etime } = JSON.parse(body || "{}") as { stime: number; etime: number };
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"stime":${stime},"etime":${etime},"total":${RECORDS},"retrievedTotal":${RECORDS},"data":[`);
      for (let i = 0; i < RECORDS; i += 1000) {
        const piece = Array.from({ length: 1000 }, (_, k) => record(i + k)).join(",");
        if (!res.write(i === 0 ? piece : `,${piece}`)) await new Promise((r) => res.once("drain", r));
      }
      res.end("]}");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("80,000-record pages at APM_CONCURRENCY=16, through npm run cli", () => {
  let server: Server;
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    [server, db] = await Promise.all([bigPages(), createTestDatabase()]);
    dir = mkdtempSync(join(tmpdir(), "apm-memory-"));
  });
  afterAll(async () => {
    server?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits 0 with every record stored and a peak RSS under 256 MiB", async () => {
    const rssFile = join(dir, "peak-rss.txt");
    const env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      NODE_OPTIONS: `--import ${PRELOAD}`,
      PEAK_RSS_FILE: rssFile,
      APM_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      APM_PROJECTS: PROJECTS.map((p) => `${p}:big-page-token-${p}`).join(","),
      DATABASE_URL: db.url,
      APM_DB_SCHEMA: db.schema,
      APM_STREAMS: "stat.transaction",
      APM_START: "3h",
      APM_SETTLE: "0m",
      APM_CONCURRENCY: "16",
      APM_WINDOW_CONCURRENCY: "8",
      APM_LOG_FORMAT: "plain",
    };
    const child = spawn("npm", ["run", "-s", "cli", "--", "sync"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const out: string[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c.toString()));
    child.stderr.on("data", (c: Buffer) => out.push(c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, out.join("").slice(-3000)).toBe(0);
    // Per window: every record, and their counts' exact sum.
    const windows = await db.sql<{ pcode: string; n: number; total: number }[]>`
      select pcode::text, count(*)::int as n, sum(count)::int as total
      from stat_transaction group by pcode, window_start order by pcode, window_start`;
    const ledger = await db.sql<{ n: number }[]>`select count(*)::int as n from sync_windows where status = 'done'`;
    expect(windows.length).toBe(ledger[0]!.n);
    expect(windows.length).toBeGreaterThanOrEqual(PROJECTS.length * 3);
    for (const w of windows) expect(w).toMatchObject({ n: RECORDS, total: EXPECTED_SUM });
    // The CLI's process (not npm's): its peak resident set, as the kernel counted it.
    const cli = readPeaks(rssFile).filter((p) => p.argv.some((a) => a.endsWith("src/cli.ts")));
    expect(cli).toHaveLength(1);
    const peakKiB = cli[0]!.kib;
    process.stderr.write(`memory-bounded: ${windows.length} windows of ${RECORDS} records, peak RSS ${Math.round(peakKiB / 1024)} MiB\n`);
    expect(peakKiB).toBeLessThan(LIMIT_KIB);
  }, 900_000);
});
