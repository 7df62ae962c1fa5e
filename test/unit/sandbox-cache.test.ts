// The sandbox's bench mode (cacheReplies): a repeated request is answered from memory, byte for
// byte the first answer (its server clock included), the body sent as the bytes encoded once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callSandbox, type Sandbox, startSandbox } from "../../src/sandbox/index.ts";

const HOUR = 3_600_000;
const START = Date.UTC(2025, 0, 15, 12, 0);

describe("the sandbox's kept answers", () => {
  let now = START;
  let cached: Sandbox;
  let plain: Sandbox;
  beforeAll(async () => {
    cached = await startSandbox({ seed: 3, projects: 1, now: () => now, burstKeys: 0, cacheReplies: true });
    plain = await startSandbox({ seed: 3, projects: 1, now: () => now, burstKeys: 0 });
  });
  afterAll(async () => {
    await cached?.stop();
    await plain?.stop();
  });

  const ask = (sb: Sandbox) => {
    const pcode = sb.projects[0]!.pcode;
    return callSandbox(sb, "stat.transaction", { pcode, body: { stime: START - 3 * HOUR, etime: START - 2 * HOUR } });
  };

  it("answers a repeated request with the first answer's bytes, its length stated in bytes", async () => {
    now = START;
    const first = await ask(cached);
    now = START + 60_000;
    const again = await ask(cached);
    expect(first.status).toBe(200);
    expect((first.json as { data: unknown[] }).data.length).toBeGreaterThan(10);
    expect(again.text).toBe(first.text);
    for (const answer of [first, again]) expect(Number(answer.headers.get("content-length"))).toBe(Buffer.byteLength(answer.text));
  });

  it("is what keeps it: without the bench mode the same request a minute later carries the new clock", async () => {
    now = START;
    const first = await ask(plain);
    now = START + 60_000;
    const again = await ask(plain);
    const clock = (text: string) => (JSON.parse(text) as { timestamp: number }).timestamp;
    expect(clock(again.text)).toBe(clock(first.text) + 60_000);
    expect(Number(again.headers.get("content-length"))).toBe(Buffer.byteLength(again.text));
  });
});
