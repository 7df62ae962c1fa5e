// The notes of windows in flight (src/db/ledger/windowsInFlight.ts) are written together: the
// windows that start while a note is being written are noted in one statement and one commit
// (src/engine/run-windowed.ts inFlightNotes), each still noted before its rows are written and
// removed by its write. The server holds four requests until they all wait, and reads the notes
// of the four windows then.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { markInFlight, type WindowKey } from "../../src/db/ledger/windowsInFlight.ts";
import { HOUR, runEngine } from "../support/engine-harness.ts";
import { type RecordedRequest, reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";
import { transactionRecord } from "../support/stat-records.ts";

const PCODE = 79;
const H0 = Date.UTC(2026, 4, 2, 0);
const HOURS = 4;
const NOW = H0 + 30 * HOUR;

interface Note {
  start: Date;
  tx: string;
}

describe("the notes of windows in flight", () => {
  /** The notes seen while the four requests waited. */
  let seen: Note[] = [];
  let waiting: (() => void)[] = [];
  const sd = useServerAndDatabase(async (req: RecordedRequest, res: ServerResponse) => {
    if (req.url !== "/open/api/v2/stat/transaction") return reply(res, 404, JSON.stringify({ msg: "not here", code: 404 }));
    const body = JSON.parse(req.body || "{}") as { stime: number; etime: number };
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length < HOURS) return;
      void readNotes().then(() => {
        for (const go of waiting) go();
        waiting = [];
      });
    });
    const data = [transactionRecord(1, "/s1", (body.stime - H0) / HOUR + 1)];
    reply(res, 200, JSON.stringify({ stime: body.stime, etime: body.etime, timestamp: NOW, data, total: 1, retrievedTotal: 1 }));
  });
  /** The notes of the four windows, once all are committed (a note leaves with its request, not before it). */
  async function readNotes(): Promise<void> {
    for (let i = 0; i < 200; i++) {
      seen = await sd.db.sql<Note[]>`SELECT window_start AS start, xmin::text AS tx FROM sync_attempts ORDER BY window_start`;
      if (seen.length === HOURS) return;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it("of windows starting together share a commit, and each window's write removes its own", async () => {
    const { server, db } = sd;
    const result = await runEngine(
      {
        baseUrl: server.url,
        projects: [{ pcode: PCODE, token: "notes-token-1" }],
        database: db,
        now: () => NOW,
        env: { APM_WINDOW_CONCURRENCY: String(HOURS) },
      },
      { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOURS * HOUR }, streams: ["stat.transaction"] },
    );
    expect(result.streams.get("stat.transaction")).toMatchObject({ windows: HOURS, rows: HOURS, failed: 0 });
    expect(seen.map((n) => (n.start.getTime() - H0) / HOUR)).toEqual([0, 1, 2, 3]);
    // The first note leaves at once; the three asked for while it was written go together.
    expect(new Set(seen.map((n) => n.tx)).size).toBeLessThanOrEqual(2);
    const [left] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sync_attempts`;
    expect(left!.n).toBe(0);
  });

  it("are one row per window, a window given twice noted once, its crash count kept", async () => {
    const { db } = sd;
    const key = (hour: number): WindowKey => ({
      stream: "stat.sql",
      pcode: 3_000_000_001,
      partition: "",
      start: H0 + hour * HOUR,
      end: H0 + (hour + 1) * HOUR,
    });
    await markInFlight(db.sql, [key(0), key(1), key(0)], null);
    await db.sql`UPDATE sync_attempts SET crashes = 1 WHERE window_start = ${new Date(H0)}`;
    await markInFlight(db.sql, [key(0), key(2)], null);
    await markInFlight(db.sql, [], null);
    const rows = await db.sql<{ pcode: string; hour: number; crashes: number }[]>`
      SELECT pcode::text, ((extract(epoch FROM window_start) * 1000 - ${H0}) / ${HOUR})::int AS hour, crashes
      FROM sync_attempts WHERE stream = 'stat.sql' ORDER BY window_start`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { pcode: "3000000001", hour: 0, crashes: 1 },
      { pcode: "3000000001", hour: 1, crashes: 0 },
      { pcode: "3000000001", hour: 2, crashes: 0 },
    ]);
  });
});
