// Group commit end to end (src/engine/group-commit.ts): windows of a stream fetched while another
// write is under way are written together, in one transaction, and each is still exact; a window
// whose value the database refuses fails alone, the windows written with it are not lost. The
// server answers four windows at once, so that they arrive while the first one is being written.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { HOUR, ledgerRows, runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";
import { transactionRecord } from "../support/stat-records.ts";

const PCODE = 78;
const H0 = Date.UTC(2026, 4, 1, 0);
const HOURS = 8;
const NOW = H0 + 30 * HOUR;
const REFUSED = H0 + 6 * HOUR;

const record = (serviceHash: number, count: number) => transactionRecord(serviceHash, `/s${serviceHash}`, count);

/** Requests held until four wait, then answered together. */
let waiting: (() => void)[] = [];
async function answer(req: RecordedRequest, res: ServerResponse) {
  if (req.url !== "/open/api/v2/stat/transaction") return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
  const body = JSON.parse(req.body || "{}") as { stime: number; etime: number };
  await new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (waiting.length < 4) return;
    for (const go of waiting) go();
    waiting = [];
  });
  const hour = (body.stime - H0) / HOUR;
  const data = [record(1, hour + 1), record(2, 10 * (hour + 1))];
  reply(res, 200, JSON.stringify({ stime: body.stime, etime: body.etime, timestamp: NOW, data, total: 2, retrievedTotal: 2 }));
}

describe("windows written together", () => {
  const sd = useServerAndDatabase(answer);

  it("share transactions, stay exact, and a refused window fails alone", async () => {
    const { server, db } = sd;
    await db.sql.unsafe(
      `ALTER TABLE stat_transaction ADD CONSTRAINT refuse_one_hour CHECK (window_start <> '${new Date(REFUSED).toISOString()}')`,
    );
    const result = await runEngine(
      {
        baseUrl: server.url,
        projects: [{ pcode: PCODE, token: "group-token-1" }],
        database: db,
        now: () => NOW,
        env: { APM_WINDOW_CONCURRENCY: "4" },
      },
      { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOURS * HOUR }, streams: ["stat.transaction"] },
    );
    expect(result.streams.get("stat.transaction")).toMatchObject({ windows: HOURS, rows: 2 * (HOURS - 1), failed: 1 });
    const done = await db.sql<{ start: Date; tx: string }[]>`
      SELECT window_start AS start, xmin::text AS tx FROM sync_windows WHERE status = 'done' ORDER BY window_start`;
    expect(done.map((d) => (d.start.getTime() - H0) / HOUR)).toEqual([0, 1, 2, 3, 4, 5, 7]);
    // Of the first four, answered together, at least two were committed by one transaction.
    expect(new Set(done.slice(0, 4).map((d) => d.tx)).size).toBeLessThan(4);
    const failed = await ledgerRows(db.sql, { stream: "stat.transaction", status: "failed" });
    expect(failed.map((f) => f.start)).toEqual([REFUSED]);
    // Each written hour holds exactly its own two rows.
    const rows = await db.sql<{ hour: number; n: number; count: string }[]>`
      SELECT ((extract(epoch FROM window_start) * 1000 - ${H0}) / ${HOUR})::int AS hour, count(*)::int AS n, sum(count)::text AS count
      FROM stat_transaction GROUP BY 1 ORDER BY 1`;
    expect(rows.map((r) => ({ ...r }))).toEqual([0, 1, 2, 3, 4, 5, 7].map((h) => ({ hour: h, n: 2, count: String(11 * (h + 1)) })));
    // The run's refresh after transactions of several windows: the day's rollup holds every written hour.
    const [day] = await db.sql<{ count: string }[]>`SELECT sum(count)::text AS count FROM rollup_stat_transaction_daily`;
    expect(day!.count).toBe(String(11 * [0, 1, 2, 3, 4, 5, 7].reduce((n, h) => n + h + 1, 0)));
  });
});
