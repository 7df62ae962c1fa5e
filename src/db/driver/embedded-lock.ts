// One process at a time per embedded data directory. PGlite keeps no lock of its own: two
// processes on one directory each run a Postgres on the same files and corrupt them (broken
// btree indexes, XX002 on the next run). So the opener creates `<dataDir>/apm-sync.lock` with
// O_EXCL, holding who it is, and removes it when it closes the database (or exits). A holder that
// died is taken over: on this machine and in this pid namespace, when its pid is gone or now
// belongs to a process started at another time (/proc/<pid>/stat); elsewhere (another container
// sharing the volume, another host) by its heartbeat, the file's mtime, touched while it lives.
import { closeSync, linkSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const LOCK_FILE = "apm-sync.lock";

/** How long an opener waits for another process to close the directory, by default (APM_DATA_DIR_WAIT). */
export const DEFAULT_WAIT_MS = 60_000;

/** What the lock file holds. */
export interface LockHolder {
  readonly pid: number;
  /** The command line (apm-sync's arguments: no secret is ever a flag). */
  readonly command: string;
  /** When it took the lock (ISO). */
  readonly since: string;
  /** Start time of the process in clock ticks since boot (/proc/<pid>/stat field 22); null off Linux. */
  readonly start: string | null;
  readonly boot: string | null;
  /** Its pid namespace (/proc/self/ns/pid): pids of another container mean nothing here. */
  readonly pidNs: string | null;
  readonly host: string;
}

/** How often a holder touches the file, and how long a holder we cannot check may stay silent. */
const HEARTBEAT_MS = 15_000;
export const SILENT_STALE_MS = 10 * 60_000;
/**
 * How long a lock file may name no holder (empty, cut short, not apm-sync's): its maker writes it
 * right after creating it, and reads it back before it counts as held, so one that stays
 * unreadable this long was left by a crash (or by someone else), and is taken over.
 */
export const UNREADABLE_STALE_MS = 3_000;
const POLL_MS = 200;

const readOr = <T>(read: () => T, fallback: T): T => {
  try {
    return read();
  } catch {
    return fallback;
  }
};

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses); null when gone or a zombie. */
function processStart(pid: number): string | null {
  const stat = readOr(() => readFileSync(`/proc/${pid}/stat`, "utf8"), "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[0] && fields[0] !== "Z" && fields[0] !== "X" ? (fields[19] ?? null) : null;
}

const hasProc = () => readOr(() => statSync("/proc/self/stat").isFile(), false);

/** What this process writes into the lock file. */
export function thisProcess(): LockHolder {
  const proc = hasProc();
  return {
    pid: process.pid,
    command: ["apm-sync", ...process.argv.slice(2)].join(" ").slice(0, 200),
    since: new Date().toISOString(),
    start: proc ? processStart(process.pid) : null,
    boot: proc ? readOr(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim(), null) : null,
    pidNs: proc ? readOr(() => readlinkSync("/proc/self/ns/pid"), null) : null,
    host: hostname(),
  };
}

/** Whether the process `h` names still runs, or null when its pid cannot be checked from here. */
function holderAlive(h: LockHolder, self: LockHolder): boolean | null {
  if (self.boot !== null && h.boot !== null) {
    // Another boot of this machine: every process of the old one is gone.
    if (h.boot !== self.boot) return h.host === self.host ? false : null;
    if (h.pidNs !== self.pidNs) return null;
    const start = processStart(h.pid);
    return start !== null && (h.start === null || start === h.start);
  }
  if (h.host !== self.host || h.boot !== self.boot) return null;
  try {
    process.kill(h.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function parse(text: string): LockHolder | null {
  const h = readOr(() => JSON.parse(text) as Partial<LockHolder>, null);
  return h && typeof h.pid === "number" && typeof h.command === "string" && typeof h.since === "string" ? (h as LockHolder) : null;
}

/** "pid 123 (apm-sync sync, since ...) on host x"; for a lock file not (yet) readable, what it is. */
export function describeHolder(h: LockHolder | null, self: LockHolder = thisProcess()): string {
  if (!h) return "a process that is writing the lock file now";
  const where = h.host !== self.host ? ` on host ${h.host}` : h.pidNs !== self.pidNs ? " in another container" : "";
  return `pid ${h.pid} (${h.command}, since ${h.since})${where}`;
}

interface Seen {
  readonly text: string;
  readonly holder: LockHolder | null;
  readonly mtimeMs: number;
}

function look(path: string): Seen | null {
  try {
    const mtimeMs = statSync(path).mtimeMs;
    const text = readFileSync(path, "utf8");
    return { text, holder: parse(text), mtimeMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Whether `seen` is a lock nobody holds; `sinceMs` is when this opener first saw it so (performance.now()). */
function isStale(seen: Seen, self: LockHolder, sinceMs: number): boolean {
  // By its age, or by this opener's own clock (a shared volume's clock may be off ours).
  if (!seen.holder) return Math.max(Date.now() - seen.mtimeMs, performance.now() - sinceMs) > UNREADABLE_STALE_MS;
  const alive = holderAlive(seen.holder, self);
  return alive === null ? Date.now() - seen.mtimeMs > SILENT_STALE_MS : !alive;
}

/**
 * Removes the stale lock `seen`. Renamed away first and compared: if another opener took the stale
 * lock over meanwhile and made its own, that one is put back instead of being deleted.
 */
function takeOver(path: string, seen: Seen): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw e;
  }
  // link, not rename: it fails rather than replace a lock made meanwhile.
  if (readOr(() => readFileSync(aside, "utf8"), "") !== seen.text) readOr(() => linkSync(aside, path), undefined);
  rmSync(aside, { force: true });
}

/**
 * Creates the lock file holding `text`; whether it holds it now. Read back: an opener that took a
 * file still empty for stale (this process stalled between creating and writing it) has moved it
 * away meanwhile.
 */
function tryCreate(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return readOr(() => readFileSync(path, "utf8"), "") === text;
}

export interface LockOptions {
  /** How long to wait for a live holder (APM_DATA_DIR_WAIT). */
  readonly waitMs: number;
  /** Told once, when the directory is found in use and the wait begins. */
  readonly onWait?: (holder: string) => void;
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** The error when the wait ran out: one line naming the holder and what to do. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: string,
    readonly waitedMs: number,
  ) {
    super(
      `the embedded database in ${dir} is in use by ${holder}; gave up after ${Math.round(waitedMs / 1000)} s ` +
        `(APM_DATA_DIR_WAIT): let that run finish and run again, or raise APM_DATA_DIR_WAIT; if no such process runs, delete ${join(dir, LOCK_FILE)}`,
    );
  }
}

/** Takes the data directory's lock, waiting up to `waitMs` for a live holder. */
export async function lockDataDir(dir: string, opts: LockOptions): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const self = thisProcess();
  const text = JSON.stringify(self);
  const started = Date.now();
  let told = false;
  // When this opener first saw the lock file as it is now.
  let first = { key: "", at: 0 };
  for (;;) {
    if (tryCreate(path, text)) return held(path, text);
    const seen = look(path);
    if (seen === null) continue;
    // Ours, put back by an opener that had moved it away while it was still empty.
    if (seen.text === text) return held(path, text);
    const key = `${seen.mtimeMs} ${seen.text}`;
    if (key !== first.key) first = { key, at: performance.now() };
    if (isStale(seen, self, first.at)) {
      takeOver(path, seen);
      continue;
    }
    const holder = describeHolder(seen.holder, self);
    const waited = Date.now() - started;
    if (waited >= opts.waitMs) throw new DataDirBusyError(dir, holder, waited);
    if (!told) opts.onWait?.(holder);
    told = true;
    await sleep(Math.min(POLL_MS, opts.waitMs - waited));
  }
}

/** The lock while this process holds it: a heartbeat for openers that cannot check its pid, removed on release or exit. */
function held(path: string, text: string): DataDirLock {
  const ours = () => readOr(() => readFileSync(path, "utf8"), "") === text;
  const beat = setInterval(() => {
    const now = new Date();
    if (ours()) readOr(() => utimesSync(path, now, now), undefined);
  }, HEARTBEAT_MS).unref();
  const release = () => {
    clearInterval(beat);
    process.removeListener("exit", release);
    if (ours()) rmSync(path, { force: true });
  };
  process.once("exit", release);
  return { path, release };
}
