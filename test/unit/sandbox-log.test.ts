// A long-running sandbox (`simulate`) keeps a bounded request log, newest entries last.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callSandbox } from "../../src/sandbox/call.ts";
import { type Sandbox, startSandbox } from "../../src/sandbox/index.ts";

describe("sandbox request log limit", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ projects: 1, logLimit: 10 });
  });
  afterAll(async () => {
    await sb.stop();
  });

  it("drops the oldest entries beyond the limit", async () => {
    const pcode = sb.projects[0]!.pcode;
    for (let i = 0; i < 40; i++) {
      const res = await callSandbox(sb, "scalar.tps", { pcode });
      expect(res.status).toBe(200);
    }
    expect(sb.requestLog.length).toBeGreaterThanOrEqual(10);
    expect(sb.requestLog.length).toBeLessThanOrEqual(15);
    const last = sb.requestLog[sb.requestLog.length - 1]!;
    expect(last.opId).toBe("scalar.tps");
    // Entries stay in order: the kept ones are the newest.
    const times = sb.requestLog.map((e) => e.at);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});
