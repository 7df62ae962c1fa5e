// The embedded database's WAL, bounded. A Postgres server checkpoints by itself once about
// max_wal_size of WAL has been written since the last checkpoint, and the checkpoint recycles the
// segments before it. PGlite runs one backend alone (Postgres's single-user mode), which never
// asks for a checkpoint for the WAL's sake: pg_wal grew by everything a run wrote (15 GB for a
// 30-day backfill of 3 projects) until the database was closed. So an open embedded database
// checks twice a second how much WAL was written since the last checkpoint, and past half of
// max_wal_size runs one, as the server's checkpointer would. (Every 2 s was too seldom: the rollups'
// refresh at a run's end writes about 15 MB/s, and pg_wal peaked above twice max_wal_size.)
import type postgres from "postgres";

/** The bound, in the embedded server's postgresql.conf: a checkpoint keeps at most this much WAL for reuse. */
export const MAX_WAL_MB = 64;
export const WAL_SETTINGS = [`max_wal_size = ${MAX_WAL_MB}MB`, "min_wal_size = 32MB"];

const CHECK_EVERY_MS = 500;
const CHECKPOINT_AFTER_BYTES = (MAX_WAL_MB / 2) * 1024 * 1024;

/**
 * Leads the bound's own statements: they run on a clock of their own, between the caller's, and a
 * statement hook (openDatabase's `debug`, tests counting statements) leaves them out (connect.ts).
 */
export const WAL_BOUND_TAG = "/* apm-sync: WAL bound */";

/** WAL written since the last checkpoint's redo point, in bytes. */
export async function walSinceCheckpoint(sql: postgres.Sql): Promise<number> {
  const [row] = await sql.unsafe<{ bytes: number }[]>(
    `${WAL_BOUND_TAG} SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()`,
  );
  return row?.bytes ?? 0;
}

export async function checkpoint(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`${WAL_BOUND_TAG} CHECKPOINT`);
}

/**
 * Checkpoints `sql`'s embedded database whenever enough WAL piled up, until `stop()`. The check is
 * a query on the pool's one connection: it runs between transactions, never inside one.
 */
export function boundWal(sql: postgres.Sql, onError: (e: unknown) => void): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const check = async () => {
    if ((await walSinceCheckpoint(sql)) > CHECKPOINT_AFTER_BYTES) await checkpoint(sql);
  };
  const timer = setInterval(() => {
    running ??= check()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  }, CHECK_EVERY_MS).unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
