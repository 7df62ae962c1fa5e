// APM_DB_CONNECTIONS: how a command's connections into Postgres are spent (a pool, a lock's
// connection for each stream written at once, the run's own lock's), and the setting's bounds.
// That a run keeps to the budget is tested against a role's CONNECTION LIMIT
// (test/integration/db-server-limits.test.ts).
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import {
  connectionBudget,
  DB_CONNECTIONS_DEFAULT,
  DB_CONNECTIONS_MIN,
  QUEUE_CONNECTIONS,
  STREAMS_AT_ONCE,
} from "../../src/db/driver/connection-budget.ts";

const opened = (n: number) => {
  const b = connectionBudget(n);
  return b.pool + b.streams + 1;
};

describe("the connection budget", () => {
  it("the default is what a run opened before the setting: 4 streams at once, a pool of 10, 15 in all", () => {
    expect(DB_CONNECTIONS_DEFAULT).toBe(15);
    expect(connectionBudget(DB_CONNECTIONS_DEFAULT)).toEqual({ streams: STREAMS_AT_ONCE, pool: 10 });
  });

  it("never opens more than it is given; fewer streams at once, each with a pool of two or more beside it", () => {
    for (let n = DB_CONNECTIONS_MIN; n <= DB_CONNECTIONS_DEFAULT; n++) {
      const b = connectionBudget(n);
      expect(opened(n), `${n}`).toBeLessThanOrEqual(n);
      expect(b.streams, `${n}`).toBeGreaterThanOrEqual(1);
      expect(b.pool, `${n}`).toBeGreaterThanOrEqual(b.streams + 1);
      // One more connection never takes a stream or a pool connection away.
      if (n > DB_CONNECTIONS_MIN) {
        const fewer = connectionBudget(n - 1);
        expect(b.streams, `${n}`).toBeGreaterThanOrEqual(fewer.streams);
        expect(b.pool, `${n}`).toBeGreaterThanOrEqual(fewer.pool);
      }
    }
    expect(connectionBudget(4)).toEqual({ streams: 1, pool: 2 });
    expect(connectionBudget(9)).toEqual({ streams: 2, pool: 6 });
  });

  it("a worker's or enqueue's warehouse gets what the job queue leaves: with the default, 3 streams at once and a pool of 8", () => {
    expect(QUEUE_CONNECTIONS).toBe(2);
    expect(connectionBudget(DB_CONNECTIONS_DEFAULT - QUEUE_CONNECTIONS)).toEqual({ streams: 3, pool: 8 });
    expect(opened(DB_CONNECTIONS_DEFAULT - QUEUE_CONNECTIONS) + QUEUE_CONNECTIONS).toBeLessThanOrEqual(DB_CONNECTIONS_DEFAULT);
  });

  it("APM_DB_CONNECTIONS is read, and refused outside 4..15 with the bounds", () => {
    const env = { APM_BASE_URL: "http://127.0.0.1:1", APM_PROJECTS: "1001:token-abcdef12" };
    expect(loadConfig({ env }).dbConnections).toBe(15);
    expect(loadConfig({ env: { ...env, APM_DB_CONNECTIONS: "6" } }).dbConnections).toBe(6);
    for (const bad of ["3", "16", "4.5", "many"]) {
      const error = (() => {
        try {
          loadConfig({ env: { ...env, APM_DB_CONNECTIONS: bad } });
        } catch (e) {
          return e;
        }
      })();
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(`APM_DB_CONNECTIONS: expected a whole number from 4 to 15, got "${bad}"`);
    }
  });
});
