// A server's record keys land in `extra` exactly, `__proto__` included, and never meet ours
// (`_original`); a negative count is quarantined instead of skewing every sum. End to end: a
// tiny server, the engine, the tables and the quarantine.
import { describe, expect, it } from "vitest";
import { HOUR, runEngine } from "../support/engine-harness.ts";
import { reply } from "../support/http-server.ts";
import { useServerAndDatabase } from "../support/server-and-db.ts";

const NOW = Date.UTC(2026, 0, 10, 9, 17);
const H0 = Date.UTC(2026, 0, 10, 6);
const PCODE = 12;

// JSON text written by hand: `__proto__` stays a key of the record, as a server sends it.
const RECORDS = [
  '{"serviceHash":1,"service":"plain","count":5,"error":1,"__proto__":{"isAdmin":true},"_original":"theirs"}',
  '{"serviceHash":2,"service":"nul\\u0000inside","count":"4","__proto__":"text","_original":"theirs too"}',
  '{"serviceHash":3,"service":"negative","count":-100,"error":0}',
  '{"serviceHash":4,"service":"negative errors","count":2,"error":-7}',
];

describe("record keys and counts, end to end", () => {
  const t = useServerAndDatabase((req, res) => {
    if (!req.url.startsWith("/open/api/v2/stat/transaction")) return reply(res, 404, "{}");
    const { stime, etime } = JSON.parse(req.body) as { stime: number; etime: number };
    reply(res, 200, `{"stime":${stime},"etime":${etime},"total":4,"retrievedTotal":4,"data":[${RECORDS.join(",")}]}`);
  });

  it("stores __proto__ and the server's _original as keys of extra, quarantines negative counts", async () => {
    const result = await runEngine(
      { baseUrl: t.server.url, projects: [{ pcode: PCODE, token: "keys-token-1" }], database: t.db, now: () => NOW },
      { command: "backfill", mode: { kind: "backfill", from: H0, to: H0 + HOUR }, streams: ["stat.transaction"] },
    );
    expect(result.exitCode).toBe(0);
    const rows = await t.db.sql<{ service: string; count: number; extra: string }[]>`
      SELECT service, count::int AS count, extra::text AS extra FROM stat_transaction ORDER BY service_hash`;
    expect(rows.map((r) => ({ ...r, extra: JSON.parse(r.extra) as unknown }))).toEqual([
      { service: "plain", count: 5, extra: JSON.parse('{"__proto__":{"isAdmin":true},"__original":"theirs"}') },
      {
        service: "nul\uFFFDinside",
        count: 4,
        extra: JSON.parse('{"__proto__":"text","__original":"theirs too","_original":{"service":"nul\\\\u0000inside"}}'),
      },
    ]);
    const q = await t.db.sql<{ reason: string }[]>`SELECT reason FROM quarantine ORDER BY record_index`;
    expect(q.map((r) => r.reason)).toEqual([
      "count: expected a count, never negative, got -100",
      "error: expected a count, never negative, got -7",
    ]);
    const [sum] = await t.db.sql<{ calls: number }[]>`SELECT sum(count)::int AS calls FROM stat_transaction`;
    expect(sum!.calls).toBe(9);
  }, 60_000);
});
