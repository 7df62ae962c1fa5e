// How many connections a command opens into a Postgres server (APM_DB_CONNECTIONS), and what they
// are spent on. A stream target being written holds a connection of its own for its advisory lock
// (connect.ts: provideLockSessions), and the pool serves its write transaction and a planner's or
// ledger read beside it; the run holds a lock's connection of its own, and its bookkeeping (its
// row, progress) takes two of the pool. Fewer connections run fewer stream targets at once.

/** Stream targets a run works on at once, at most (src/engine/run.ts). */
export const STREAMS_AT_ONCE = 4;

/** The fewest connections a command can work with: one stream's lock, a pool of two, the run's lock. */
export const DB_CONNECTIONS_MIN = 4;

export interface ConnectionBudget {
  /** Stream targets written at once. */
  readonly streams: number;
  /** The shared pool's size. */
  readonly pool: number;
}

/** Connections taken by the run's own lock besides its streams' (one each) and the pool. */
const RUN_LOCK = 1;

/** How `connections` (at least DB_CONNECTIONS_MIN) are spent: as many streams at once as fit with a pool of two a stream and two more. */
export function connectionBudget(connections: number): ConnectionBudget {
  const usable = Math.max(connections, DB_CONNECTIONS_MIN) - RUN_LOCK;
  // Each stream: its lock and two of the pool; the run's bookkeeping: two more of the pool.
  const streams = Math.max(1, Math.min(STREAMS_AT_ONCE, Math.floor((usable - 2) / 3)));
  return { streams, pool: Math.min(2 * streams + 2, usable - streams) };
}

/**
 * Connections of the job queue (graphile-worker) in a command that uses it (worker, enqueue): one
 * pool for its LISTEN and for fetching, completing and adding jobs. They count in
 * APM_DB_CONNECTIONS: the warehouse gets the rest (src/app.ts).
 */
export const QUEUE_CONNECTIONS = 2;

/** Connections a command opens by default: the budget of STREAMS_AT_ONCE streams (15). */
export const DB_CONNECTIONS_DEFAULT = 3 * STREAMS_AT_ONCE + 2 + RUN_LOCK;
