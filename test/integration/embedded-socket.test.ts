// What the embedded database's in-process connection hands PGlite per call (embedded-socket.ts):
// each call costs a turn of PGlite's lock and main loop, so the messages of one write go in one
// call, and no CopyFail follows a finished COPY (the driver patch, patches/postgres+3.4.9.patch,
// sends none; the connection itself passes on what it is sent). The answers stay the backend's own:
// the rows and counts below are read back.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type EmbeddedServer, startEmbedded } from "../../src/db/driver/embedded.ts";

const EXECUTE = 0x45;
const COPY_FAIL = 0x66;
const COPY_DONE = 0x63;

let dir: string;
let server: EmbeddedServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "apm-socket-"));
  server = await startEmbedded(dir, "apm_sock");
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The type bytes of the protocol messages in one call's input. */
function types(bytes: Uint8Array): number[] {
  const out: number[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at + 5 <= bytes.length; at += 1 + view.getInt32(at + 1)) out.push(bytes[at]!);
  return out;
}

/** A client of the embedded database on one connection of its own. */
const connect = () => postgres({ ...({ socket: () => server.connect() } as Record<string, unknown>), max: 1, onnotice: () => {} });

/** The type bytes of each call's input into PGlite, from now until `seen.mockRestore()`. */
function recordCalls() {
  const calls: number[][] = [];
  const real = PGlite.prototype.execProtocolRawStream;
  const seen = vi.spyOn(PGlite.prototype, "execProtocolRawStream").mockImplementation(function (this: PGlite, message, options) {
    calls.push(types(message));
    return real.call(this, message, options);
  });
  return { calls, seen };
}

describe("the embedded connection's calls into PGlite", () => {
  it("sends a pipelined transaction's statements together, and no CopyFail after a COPY", async () => {
    const sql = connect();
    try {
      await sql`create table t (x int primary key, y text)`;
      // Prepared once: postgres.js pipelines a prepared statement's next runs.
      await sql`insert into t values (${0}, ${"v0"})`;
      const { calls, seen } = recordCalls();
      try {
        await sql.begin(async (tx) => {
          // Made without awaiting: they leave pipelined, in one write.
          const inserts = [1, 2, 3].map((x) => tx`insert into t values (${x}, ${`v${x}`})`.execute());
          await Promise.all(inserts);
          const copy = await tx`copy t (x, y) from stdin`.writable();
          copy.end("4\tv4\n5\tv5\n");
          await new Promise((resolve, reject) => copy.on("finish", resolve).on("error", reject));
        });
        // Whatever postgres.js sends after the COPY (its CopyFail) has gone out before this statement's answer.
        expect(await sql`select count(*)::int as n, string_agg(y, ',' order by x) as ys from t`).toEqual([
          { n: 6, ys: "v0,v1,v2,v3,v4,v5" },
        ]);
      } finally {
        seen.mockRestore();
      }
      expect(calls.flat()).not.toContain(COPY_FAIL);
      const executes = calls.map((c) => c.filter((t) => t === EXECUTE).length);
      expect(Math.max(...executes)).toBeGreaterThanOrEqual(3);
    } finally {
      await sql.end();
    }
  });

  it("holds a statement sent while a COPY takes data until the COPY ends, then runs it", async () => {
    // A pool's one connection, a COPY outside a transaction and a query made beside it: postgres.js
    // sends the query right behind the COPY statement, before the copy-in response comes back.
    // Handed to PGlite inside the COPY, it ended the process's database (exit(1)).
    const sql = connect();
    try {
      await sql`create table v (x int primary key, y text)`;
      const { calls, seen } = recordCalls();
      try {
        const copy = sql`copy v (x, y) from stdin`;
        const opened = copy.writable();
        copy.execute();
        const beside = sql`select count(*)::int as n, string_agg(y, ',' order by x) as ys from v`.execute();
        const stream = await opened;
        const finished = new Promise((resolve, reject) => stream.on("finish", resolve).on("error", reject));
        stream.end("1\ta\n2\tb\n3\tc\n");
        await finished;
        // Run after the COPY: it sees the rows whose data was sent after it.
        expect(await beside).toEqual([{ n: 3, ys: "a,b,c" }]);
      } finally {
        seen.mockRestore();
      }
      // The COPY's call (statement, data, CopyDone) holds no statement of the query; the query's call comes after it.
      const copyCall = calls.findIndex((c) => c.includes(COPY_DONE));
      expect(copyCall).toBeGreaterThanOrEqual(0);
      expect(calls[copyCall]!.filter((t) => t === EXECUTE)).toEqual([]);
      expect(calls.slice(copyCall + 1).some((c) => c.includes(EXECUTE))).toBe(true);
      expect(await sql`select count(*)::int as n from v`).toEqual([{ n: 3 }]);
    } finally {
      await sql.end();
    }
  });

  it("probes a COPY statement once: a second COPY of the same text is one call, and a wrong one fails as the backend says", async () => {
    const sql = connect();
    const copy = async (data: string) => {
      const stream = await sql`copy u (x, y) from stdin`.writable();
      stream.end(data);
      await new Promise((resolve, reject) => stream.on("finish", resolve).on("error", reject));
    };
    try {
      await sql`create table u (x int primary key, y text)`;
      const { calls, seen } = recordCalls();
      const counts: number[] = [];
      try {
        for (const data of ["1\ta\n", "2\tb\n", "3\tc\n"]) {
          const before = calls.length;
          await copy(data);
          counts.push(calls.length - before);
        }
        // The first COPY: its probe (a COPY of no rows) and itself; the next ones: only themselves.
        expect(counts).toEqual([2, 1, 1]);
        // A repeat of a key fails the real COPY with the backend's own error, though no probe ran.
        await expect(copy("1\tagain\n")).rejects.toMatchObject({ code: "23505" });
      } finally {
        seen.mockRestore();
      }
      expect(await sql`select string_agg(y, ',' order by x) as ys from u`).toEqual([{ ys: "a,b,c" }]);
      await sql`drop table u`;
      // The table gone: the same COPY text fails with the backend's error too.
      await expect(copy("4\td\n")).rejects.toMatchObject({ code: "42P01" });
    } finally {
      await sql.end();
    }
  });
});
