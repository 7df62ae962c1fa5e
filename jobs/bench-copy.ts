// The COPY line of `npm run bench`: the rows the engine wrote, copied out and back into empty
// copies of the same tables (text format, one COPY per table); only the COPY in is timed, with
// the CPU it takes in this process and in the server's backend (read from /proc when the server
// runs on this machine).
import { readFileSync } from "node:fs";
import { pipeline } from "node:stream/promises";
import postgres from "postgres";
import { STAT_TYPES } from "../src/catalogue/stats.ts";

export interface CopyRun {
  rows: number;
  seconds: number;
  /** CPU seconds of this process during the COPYs. */
  cpuSeconds: number;
  /** CPU seconds of the server's backend during the COPYs; null when it cannot be read. */
  serverCpuSeconds: number | null;
}

/** Clock ticks of a process, or of its thread `thread`, so far (Linux /proc), in seconds; null elsewhere. */
export function cpuOf(pid: number, thread?: number): number | null {
  try {
    const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
    const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

export async function copySameRows(sql: postgres.Sql, url: string, schema: string): Promise<CopyRun> {
  let seconds = 0;
  let cpuSeconds = 0;
  let serverCpuSeconds: number | null = 0;
  let rows = 0;
  const [backend] = await sql.unsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
  const pid = backend!.pid;
  for (const type of STAT_TYPES) {
    const table = `"${schema}"."stat_${type}"`;
    const copy = `"${schema}"."copy_stat_${type}"`;
    await sql.unsafe(`CREATE TABLE ${copy} (LIKE ${table} INCLUDING ALL)`);
    const [counted] = await sql.unsafe<{ n: string }[]>(`SELECT count(*)::text AS n FROM ${table}`);
    const tableRows = Number(counted?.n ?? 0);
    const chunks = await copyOut(url, table, tableRows);
    const server0 = cpuOf(pid);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await pipeline(
      (async function* () {
        yield* chunks;
      })(),
      await sql.unsafe(`COPY ${copy} FROM STDIN`).writable(),
    );
    seconds += (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    cpuSeconds += (cpu.user + cpu.system) / 1e6;
    const server1 = cpuOf(pid);
    serverCpuSeconds = server0 === null || server1 === null || serverCpuSeconds === null ? null : serverCpuSeconds + server1 - server0;
    rows += tableRows;
  }
  return { rows, seconds, cpuSeconds, serverCpuSeconds };
}

/**
 * The rows of `table` as COPY text (a line a row), read on a connection of its own: a second COPY
 * TO STDOUT on one connection never ended with postgres.js 3.4. Nor does the stream always end
 * (porsager/postgres#917: a bench run waited 17 minutes for it), so the read stops once every row's
 * line has arrived and the connection is closed without waiting. A partitioned table is copied out
 * through a query (COPY TO reads no partitioned table).
 */
async function copyOut(url: string, table: string, rows: number): Promise<Buffer[]> {
  const reader = postgres(url, { max: 1, onnotice: () => {} });
  const chunks: Buffer[] = [];
  let lines = 0;
  try {
    if (rows > 0)
      for await (const chunk of await reader.unsafe(`COPY (SELECT * FROM ${table}) TO STDOUT`).readable()) {
        chunks.push(chunk as Buffer);
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
        if (lines >= rows) break;
      }
  } finally {
    await reader.end({ timeout: 0 });
  }
  return chunks;
}
