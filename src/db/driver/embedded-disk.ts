// The embedded database's disk, kept from running out. PGlite's Postgres does not fail a write the
// disk cannot take: a WAL segment made on a disk with less than its 16 MiB free spun in a loop
// inside PGlite's WebAssembly, at full CPU, for good, deaf to SIGTERM (its JavaScript never ran
// again). So the embedded database is opened, and a connection hands PGlite its next statements,
// only while its disk has APM_DISK_FLOOR free; below that, the statement fails with what to do,
// and what was committed before is kept. A Postgres server fails such a write by itself (SQLSTATE
// 53100), and this is not used.
import { statfsSync } from "node:fs";

/** Free bytes kept by default: room for the WAL (max_wal_size, embedded-wal.ts) and a window's write. */
export const DEFAULT_DISK_FLOOR = 128 * 1024 * 1024;

/** How long one look at the free space serves, in ms: each statement would be a syscall too many. */
export const LOOK_EVERY_MS = 250;

const MIB = 1024 * 1024;

/** DiskFloorError's code, as driver errors carry theirs (transient.ts isDiskFull reads it). */
export const DISK_FLOOR_CODE = "DISK_FLOOR";

/** The disk holding the embedded database has less free than its floor. */
export class DiskFloorError extends Error {
  readonly code = DISK_FLOOR_CODE;
  constructor(dir: string, free: number, floor: number) {
    super(
      `the disk holding the embedded database (${dir}) has ${Math.floor(free / MIB)} MiB free, under the ${Math.ceil(floor / MIB)} MiB it keeps free (APM_DISK_FLOOR): nothing more is written. Free space on it (\`prune\` drops old months: run it once with a lower APM_DISK_FLOOR, such as 33554432 for 32 MiB), then run the command again; what was committed is kept`,
    );
    this.name = "DiskFloorError";
  }
}

/** Free bytes, to an unprivileged process, on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** How the floor looks at the disk: the clock, and the free bytes of a directory's file system (tests give their own). */
export interface DiskLook {
  readonly now?: () => number;
  readonly free?: (dir: string) => number;
}

/**
 * A check of `dir`'s free space against `floor` bytes (0: none), looked at every LOOK_EVERY_MS at
 * most: throws DiskFloorError. Between two looks the last one answers.
 */
export function diskFloor(dir: string, floor: number, { now = Date.now, free: look = freeBytes }: DiskLook = {}): () => void {
  let lookedAt = Number.NEGATIVE_INFINITY;
  let free = Number.POSITIVE_INFINITY;
  return () => {
    if (floor <= 0) return;
    if (now() - lookedAt >= LOOK_EVERY_MS) {
      free = look(dir);
      lookedAt = now();
    }
    if (free < floor) throw new DiskFloorError(dir, free, floor);
  };
}
