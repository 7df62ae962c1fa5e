// sessionsShared (db/driver/session.ts) against scripted connections: each reserved connection
// answers pg_backend_pid() from its own list, so every outcome of the check is reached, the
// one PgBouncer's test (integration/pgbouncer.test.ts) cannot force as well: the first
// connection moved to another server process while the second's transaction stayed apart.
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { sessionsShared } from "../../src/db/driver/session.ts";

interface Scripted {
  readonly sent: string[];
  released: number;
}

/** A pool whose first reserved connection answers `first`'s pids in turn, its second `second`'s. */
function scriptedPool(first: number[], second: number[]): { sql: postgres.Sql; log: Scripted[] } {
  const log: Scripted[] = [];
  const scripts = [first, second];
  const reserve = async () => {
    const pids = scripts[log.length]!;
    const me: Scripted = { sent: [], released: 0 };
    log.push(me);
    return {
      unsafe: async (text: string) => {
        me.sent.push(text);
        return text.includes("pg_backend_pid") ? [{ pid: pids.shift() }] : [];
      },
      release: () => void me.released++,
    };
  };
  return { sql: { reserve } as unknown as postgres.Sql, log };
}

describe("sessionsShared", () => {
  it("is null when each connection keeps its own process (a server, a session-mode pool), after every round", async () => {
    const { sql, log } = scriptedPool([10, 10, 10, 10, 10, 10], [20, 20, 20]);
    expect(await sessionsShared(sql)).toBeNull();
    // Three rounds, each transaction rolled back, both connections given back.
    expect(log[1]!.sent.filter((t) => t === "BEGIN").length).toBe(3);
    expect(log[1]!.sent.filter((t) => t === "ROLLBACK").length).toBe(3);
    expect(log.map((c) => c.released)).toEqual([1, 1]);
  });

  it("names the first connection's process lent to the second's transaction", async () => {
    const { sql, log } = scriptedPool([10, 11], [10]);
    expect(await sessionsShared(sql)).toBe("a second connection's transaction ran on the first's server process (10)");
    expect(log[1]!.sent.at(-1)).toBe("ROLLBACK");
    expect(log.map((c) => c.released)).toEqual([1, 1]);
  });

  it("names the first connection moved to another process meanwhile", async () => {
    const { sql } = scriptedPool([10, 12], [20]);
    expect(await sessionsShared(sql)).toBe("one connection's statements ran on two server processes (10, then 12)");
  });

  it("tries again when a round says nothing (another client took the idle process first), and sees it in a later round", async () => {
    const { sql } = scriptedPool([10, 10, 10, 10, 10, 11], [20, 21, 10]);
    expect(await sessionsShared(sql)).toBe("a second connection's transaction ran on the first's server process (10)");
  });

  it("gives the first connection back when the second cannot be had", async () => {
    const released: number[] = [];
    let n = 0;
    const sql = {
      reserve: async () => {
        if (n++ > 0) throw new Error("no second connection");
        return { unsafe: async () => [], release: () => void released.push(1) };
      },
    } as unknown as postgres.Sql;
    await expect(sessionsShared(sql)).rejects.toThrow("no second connection");
    expect(released).toEqual([1]);
  });
});
