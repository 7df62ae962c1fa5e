// A database step is retried only while its error heals (issue 38 point 7): a server that went away
// is "database unavailable" and retried within APM_DB_RETRY; a data error (22009, the time zone
// displacement an absurd setting once produced) fails the step at once with its own message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { dbStep } from "../../src/engine/db-step.ts";
import type { EngineDeps } from "../../src/engine/types.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** dbStep's dependencies: the retry budget and a logger whose warnings are kept. */
function deps(warnings: string[]): EngineDeps {
  const logger = { warn: (m: string) => void warnings.push(m) };
  return { config: loadConfig({ env: { APM_DB_RETRY: "30s" } }), logger } as unknown as EngineDeps;
}

describe("dbStep", () => {
  it("fails a data error (22009) at once, with its message, never as database unavailable", async () => {
    const warnings: string[] = [];
    let attempts = 0;
    const started = performance.now();
    const error = await dbStep(deps(warnings), "the test step", () => {
      attempts += 1;
      return db.sql`SELECT '-000712-12-31T05:55:07.918Z'::timestamptz`;
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "22009", message: expect.stringContaining("time zone displacement out of range") });
    expect({ attempts, warnings }).toEqual({ attempts: 1, warnings: [] });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("retries a server that went away (57P01, a lost connection) as database unavailable", async () => {
    const warnings: string[] = [];
    const gone = [
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }),
    ];
    let attempts = 0;
    const rows = await dbStep(deps(warnings), "the test step", async () => {
      attempts += 1;
      const error = gone[attempts - 1];
      if (error) throw error;
      return db.sql`SELECT ${attempts}::int AS attempt`;
    });
    expect(rows).toEqual([{ attempt: 3 }]);
    expect(warnings).toEqual(["database unavailable (57P01) during the test step; retrying for up to 30 s (APM_DB_RETRY)"]);
  });
});
