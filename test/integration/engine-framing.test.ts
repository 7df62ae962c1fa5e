// An answer's framing is the server's to choose (HTTP: a Content-Length, or chunked transfer
// encoding, as servers stream large answers), and so is whether its connection outlives it
// (`Connection: close`). The engine stores the same rows either way, answers small enough to be
// parsed whole and those too large for it alike (api/whole-page.ts WHOLE_BYTES), each statistic
// compared key by key with the sandbox's ground truth.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WHOLE_BYTES } from "../../src/api/whole-page.ts";
import { callSandbox, type ServerProfile } from "../../src/sandbox/index.ts";
import { compareWithTruth, DAY, type EngineHarness, HOUR, startEngineHarness } from "../support/engine-harness.ts";

const NOW = Date.UTC(2026, 0, 10, 0, 0);
const FROM = Date.UTC(2026, 0, 8);
const TO = FROM + DAY;
const STREAMS = ["stat.sql", "stat.transaction"];

const PROFILES: Pick<ServerProfile, "framing" | "connection">[] = [
  { framing: "length", connection: "keep-alive" },
  { framing: "chunked", connection: "keep-alive" },
  { framing: "length", connection: "close" },
];

describe.each(PROFILES)(
  "a backfill from a sandbox that frames its answers by $framing, connections $connection",
  ({ framing, connection }) => {
    let h: EngineHarness;
    beforeAll(async () => {
      // A burst of 2,000 keys makes the burst hour's answer larger than WHOLE_BYTES; the others are smaller.
      h = await startEngineHarness({ now: NOW, projects: 1, burstKeys: 2_000, profile: { framing, connection } });
    }, 60_000);
    afterAll(async () => h?.close());

    it("stores every statistic's counts as the ground truth, whole-parsed and split answers alike", async () => {
      const run = await h.run({ command: "backfill", mode: { kind: "backfill", from: FROM, to: TO }, streams: STREAMS });
      expect(run.exitCode).toBe(0);
      const pcode = h.pcodes[0]!;
      // Closed after each answer, every request of the run came on a connection of its own.
      const engine = h.sandbox.requestLog.filter((e) => e.opId?.startsWith("stat."));
      const connections = new Set(engine.map((e) => e.connection)).size;
      expect(engine.length).toBeGreaterThanOrEqual(STREAMS.length * 24);
      if (connection === "close") expect(connections).toBe(engine.length);
      else expect(connections).toBeLessThan(engine.length);
      // Both roads of the answer's read were taken: some answers over WHOLE_BYTES, some under.
      const sizes: number[] = [];
      for (let t = FROM; t < TO; t += HOUR) {
        const r = await callSandbox(h.sandbox, "stat.sql", { pcode, body: { stime: t, etime: t + HOUR } });
        if (framing === "chunked") expect(r.headers.get("transfer-encoding")).toBe("chunked");
        else expect(r.headers.get("content-length")).not.toBeNull();
        sizes.push(Buffer.byteLength(r.text));
      }
      expect(sizes.some((n) => n > WHOLE_BYTES)).toBe(true);
      expect(sizes.some((n) => n < WHOLE_BYTES)).toBe(true);
      for (const op of STREAMS) expect({ op, diff: (await compareWithTruth(h, op, pcode, FROM, TO)).diff }).toEqual({ op, diff: [] });
    }, 120_000);
  },
);
