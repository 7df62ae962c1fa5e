// The CPU the database server spent for this process (`npm run bench`): the Postgres backends of
// this process's connections, found by their client ports (Linux /proc, a server on this machine).
// Beside the engine's own CPU it shows where the rest of a run's CPU goes; it is never counted as
// the engine's.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { SqlHandle } from "../src/db/driver/exec.ts";
import { cpuOf } from "./bench-copy.ts";

/** Local ports of this process's TCP connections to `port`. */
function clientPorts(port: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      if (Number.parseInt(f[2]!.split(":")[1]!, 16) === port) ports.push(Number.parseInt(f[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/** CPU seconds so far of each backend serving this process (pid -> seconds); empty when unreadable. */
export async function backendCpu(sql: SqlHandle, port: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  try {
    const ports = clientPorts(port);
    const rows = await sql.unsafe<{ pid: number }[]>("SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])", [ports]);
    for (const { pid } of rows) {
      const s = cpuOf(pid);
      if (s !== null) out.set(pid, s);
    }
  } catch {
    // not Linux, or the server is elsewhere
  }
  return out;
}

/** CPU seconds the backends spent between two readings (a backend opened meanwhile counts whole). */
export function backendCpuSince(before: Map<number, number>, after: Map<number, number>): number | null {
  if (after.size === 0) return null;
  let s = 0;
  for (const [pid, cpu] of after) s += cpu - (before.get(pid) ?? 0);
  return s;
}
