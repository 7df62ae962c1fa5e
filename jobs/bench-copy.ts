// The COPY line of `npm run bench`: the rows the engine wrote, copied out and back into empty
// copies of the same tables (text format, one COPY per table); only the COPY in is timed.
import { pipeline } from "node:stream/promises";
import postgres from "postgres";
import { STAT_TYPES } from "../src/catalogue/stats.ts";

export async function copySameRows(sql: postgres.Sql, url: string, schema: string): Promise<{ rows: number; seconds: number }> {
  let seconds = 0;
  let rows = 0;
  for (const type of STAT_TYPES) {
    const table = `"${schema}"."stat_${type}"`;
    const copy = `"${schema}"."copy_stat_${type}"`;
    await sql.unsafe(`CREATE TABLE ${copy} (LIKE ${table} INCLUDING ALL)`);
    const [counted] = await sql.unsafe<{ n: string }[]>(`SELECT count(*)::text AS n FROM ${table}`);
    const chunks: Buffer[] = [];
    // A fresh connection per COPY TO STDOUT: with postgres.js 3.4, a second one on the same
    // connection never ends.
    const reader = postgres(url, { max: 1, onnotice: () => {} });
    // A partitioned table is copied out through a query (COPY TO reads no partitioned table).
    for await (const chunk of await reader.unsafe(`COPY (SELECT * FROM ${table}) TO STDOUT`).readable()) chunks.push(chunk as Buffer);
    await reader.end();
    const t0 = performance.now();
    await pipeline(
      (async function* () {
        yield* chunks;
      })(),
      await sql.unsafe(`COPY ${copy} FROM STDIN`).writable(),
    );
    seconds += (performance.now() - t0) / 1000;
    rows += Number(counted?.n ?? 0);
  }
  return { rows, seconds };
}
