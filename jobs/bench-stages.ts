// Where a row's CPU goes on the write path, stage by stage, in one process: answers of the five
// statistics fetched once from a sandbox as raw bodies, then each stage run over all of them
// several times and timed by this process's CPU (steadier than wall time on a shared machine).
// Cumulative: each line runs the stages above it too; the difference is the stage's own cost.
//   npx tsx jobs/bench-stages.ts [--hours 24] [--projects 2] [--rounds 5] [--last]
// With DATABASE_URL, a last stage COPYs each answer's rows into Postgres (in a transaction
// rolled back), the driver included.
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { request } from "undici";
import { authHeaders } from "../src/api/auth.ts";
import { type Page, readPage } from "../src/api/page.ts";
import { parseEnvelope, parseRecordBatches } from "../src/api/parse-response.ts";
import { buildRequest } from "../src/api/request.ts";
import { MemoryBudget } from "../src/api/spool.ts";
import { statOperations } from "../src/catalogue/stats.ts";
import { DAY } from "../src/catalogue/types.ts";
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/driver/connect.ts";
import type { TxHandle } from "../src/db/driver/exec.ts";
import { ensureWritePartitions } from "../src/db/partitions/ensureWritePartitions.ts";
import { tableInfo } from "../src/db/tables.ts";
import { binaryEncoder } from "../src/db/write/copyBinary.ts";
import type { Row } from "../src/db/write/row.ts";
import { openRowSink, type RowSink } from "../src/db/write/rowSink.ts";
import { targetScope, toRows } from "../src/engine/rows.ts";
import { projectTargets } from "../src/engine/targets.ts";
import type { Target } from "../src/engine/types.ts";
import { rowTimeBounds, writeLeaf } from "../src/engine/window-rows.ts";
import { migrateDatabase } from "../src/warehouse/migrate.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    hours: { type: "string", default: "24" },
    projects: { type: "string", default: "2" },
    rounds: { type: "string", default: "5" },
    /** Runs only the last stage (to profile it alone: node --cpu-prof --import tsx ...). */
    last: { type: "boolean", default: false },
  },
});
const HOUR = 3_600_000;
const to = Math.floor(Date.now() / DAY) * DAY - DAY;
const from = to - Number(values.hours) * HOUR;
const sandbox = await startSimulator(["--seed", "42", "--projects", values.projects, "--burst-keys", "0", "--cache-replies"]);
const SCHEMA = "apm_bench_stages";
const config = loadConfig({ now: to, env: { ...process.env, ...sandbox.env, APM_DB_SCHEMA: SCHEMA } });

interface Answer {
  readonly target: Target;
  readonly start: number;
  readonly end: number;
  readonly chunks: Buffer[];
}

// The bodies, as the socket delivered them.
const answers: Answer[] = [];
for (const pcode of config.api.projects.map((p) => p.pcode))
  for (const op of statOperations)
    for (const target of projectTargets(op, pcode))
      for (let start = from; start < to; start += HOUR) {
        const req = buildRequest(op, { ...target.params, stime: start, etime: start + HOUR }, config.api);
        const res = await request(`${req.origin}${req.path}`, {
          method: req.method,
          headers: { ...req.headers, ...authHeaders(op, "project", pcode, config.api) },
          body: req.body ?? null,
        });
        const chunks: Buffer[] = [];
        for await (const c of res.body) chunks.push(c as Buffer);
        answers.push({ target, start, end: start + HOUR, chunks });
      }
sandbox.stop();

const limits = { maxBytes: 2 ** 31, maxRecordBytes: 2 ** 24, budget: new MemoryBudget(2 ** 31) };
const ic = (a: Answer) => ({ ctx: { opId: a.target.op.id, path: "", attempt: 1 }, secrets: [], tokenHeader: "x" });
const readAnswer = (a: Answer): Promise<Page> => readPage(Readable.from(a.chunks), a.target.op, limits, ic(a));

/** The columns and constants of a window's replace (engine/write-window.ts). */
function sinkShape(target: Target) {
  const info = tableInfo(target.stream.table);
  const scope = targetScope(target);
  const columns = info.writable.filter((c) => c !== "pcode" && !(c in scope));
  return { info, scope, columns, constants: { pcode: target.pcode, ...scope } };
}

/** A sink that encodes each batch as the COPY would, and sends nothing. */
function encodingSink(target: Target): RowSink {
  const { info, columns, constants } = sinkShape(target);
  const encode = binaryEncoder(info, columns, { constants, tally: { replaced: 0 } });
  return {
    write: async (rows: readonly Row[]) => {
      encode(rows);
    },
    flush: async () => {},
    finish: async () => ({ written: 0, deleted: 0, replaced: 0, staged: null }),
  };
}

async function leafOf(a: Answer) {
  const page = await readAnswer(a);
  const envelope = parseEnvelope(a.target.op, page);
  return { start: a.start, end: a.end, truncated: false, expected: null, fetched: 0, page, envelope };
}

const stages: [string, (a: Answer, tx: TxHandle | null) => Promise<unknown>][] = [
  ["read body (whole parse, or split+spool)", async (a) => (await readAnswer(a)).dispose()],
  [
    "+ parse (fast lane; spooled JSON.parse)",
    async (a) => {
      const leaf = await leafOf(a);
      for (const _ of parseRecordBatches(a.target.op, leaf.page, leaf.envelope));
      leaf.page.dispose();
    },
  ],
  [
    "+ rows",
    async (a) => {
      const leaf = await leafOf(a);
      for (const b of parseRecordBatches(a.target.op, leaf.page, leaf.envelope))
        toRows(a.target, b.records, { runId: 1, windowStart: a.start, windowEnd: a.end });
      leaf.page.dispose();
    },
  ],
  [
    "+ checks, COPY encode (writeLeaf)",
    async (a, tx) => {
      const leaf = await leafOf(a);
      await writeLeaf(tx as TxHandle, a.target, leaf, leaf, encodingSink(a.target), 1, { fromMs: a.start, toMs: a.end });
      leaf.page.dispose();
    },
  ],
];

const rounds = Number(values.rounds);
let rows = 0;
for (const a of answers) {
  const leaf = await leafOf(a);
  for (const b of parseRecordBatches(a.target.op, leaf.page, leaf.envelope)) rows += b.records.length;
  leaf.page.dispose();
}
const database = process.env.DATABASE_URL ? await openDatabase(config) : null;
if (database) {
  await migrateDatabase(database);
  for (const a of answers) await ensureWritePartitions(database.sql, a.target.stream.table, rowTimeBounds(a.target.stream.table, a).months);
  stages.push([
    "+ COPY into Postgres (driver, socket)",
    async (a, tx) => {
      const leaf = await leafOf(a);
      const { info, scope } = sinkShape(a.target);
      const sink = openRowSink(tx as TxHandle, info.name, sinkShape(a.target).columns, {
        kind: "replace",
        pcode: a.target.pcode,
        start: a.start,
        end: a.end,
        scope,
      });
      await writeLeaf(tx as TxHandle, a.target, leaf, leaf, sink, null, { fromMs: a.start, toMs: a.end });
      await sink.finish();
      leaf.page.dispose();
    },
  ]);
}

const ROLLBACK = new Error("rollback");
for (const [name, stage] of values.last ? stages.slice(-1) : stages) {
  const us: number[] = [];
  const sys: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const cpu0 = process.cpuUsage();
    const run = async (tx: TxHandle | null) => {
      for (const a of answers) await stage(a, tx);
    };
    if (database && name.startsWith("+ COPY"))
      await database.sql
        .begin(async (tx) => {
          await run(tx);
          throw ROLLBACK;
        })
        .catch((e) => {
          if (e !== ROLLBACK) throw e;
        });
    else await run(null);
    const cpu = process.cpuUsage(cpu0);
    us.push((cpu.user + cpu.system) / rows);
    sys.push(cpu.system / rows);
  }
  const mid = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!.toFixed(2);
  process.stdout.write(
    `${name.padEnd(40)} ${mid(us).padStart(6)} us/row cpu (median of ${rounds}; min ${us[0]!.toFixed(2)}; system ${mid(sys)})\n`,
  );
}
process.stdout.write(`${rows} rows a round, ${answers.length} answers\n`);
// The schema was made for this bench alone (every stage's writes were rolled back): it goes.
await database?.sql.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
await database?.close();
