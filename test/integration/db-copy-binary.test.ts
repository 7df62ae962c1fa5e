// COPY binary (the writer's format) against COPY text (the server parsing every value): the same
// rows of every column type the warehouse has, edge values included, must read back the same.
// A value with no exact binary form (a number as a string) sends the whole COPY as text.
import { Socket } from "node:net";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TxHandle } from "../../src/db/driver/exec.ts";
import type { TableInfo } from "../../src/db/tables.ts";
import { binaryEncoder, NotBinaryError } from "../../src/db/write/copyBinary.ts";
import { copyRows } from "../../src/db/write/copyRows.ts";
import { copyEncoder } from "../../src/db/write/copyText.ts";
import { DATABASES, type OpenedDatabase, openTestDatabase } from "../support/databases.ts";
import { plainTableInfo } from "../support/table-info.ts";

const COLUMNS: [string, string][] = [
  ["k", "integer"],
  ["b", "bigint"],
  ["d", "double precision"],
  ["t", "text"],
  ["ok", "boolean"],
  ["ts", "timestamp with time zone"],
  ["j", "jsonb"],
  ["ab", "bigint[]"],
  ["at", "text[]"],
];
const info = (name: string): TableInfo => plainTableInfo(name, COLUMNS);
const names = COLUMNS.map(([c]) => c).filter((c) => c !== "k");

const ROWS: Record<string, unknown>[] = [
  { b: 0, d: 0, t: "", ok: true, ts: 0, j: {}, ab: [], at: [] },
  {
    b: -1,
    d: -0.5,
    t: "tab\there",
    ok: false,
    ts: new Date(Date.UTC(2025, 0, 14, 14)),
    j: { a: 1, b: [1, "x", null] },
    ab: [1, -2, null],
    at: ["a", "b c", null],
  },
  {
    b: 2 ** 53 - 1,
    d: 2228.66,
    t: "new\nline\r",
    ts: -86_400_000,
    j: { big: 12345678901234567890n },
    ab: [2 ** 53 - 1],
    at: ['q"uote', "back\\slash", "{braces}"],
  },
  { b: -(2 ** 53 - 1), d: 1e-300, t: "back\\slash", ts: 946_684_800_000, j: "a string", at: ["ünïcødé ✓", "日本語"] },
  { b: 9223372036854775807n, d: 1.7976931348623157e308, t: "ünïcødé ✓ 日本語", ts: Date.UTC(2026, 10, 23, 1, 2, 3, 456) },
  { b: -9223372036854775808n, d: Number.NaN, t: null, ok: null, ts: null, j: null, ab: null, at: null },
  { t: 42, d: -1234.5678e-9 },
  { t: new Date(Date.UTC(2024, 1, 29)), j: [1, 2, 3] },
].map((row, i) => ({ k: i, ...row }));

describe.each(DATABASES)("COPY binary on %s", (kind) => {
  let t: OpenedDatabase;

  beforeAll(async () => {
    t = await openTestDatabase(kind);
    for (const table of ["copy_text", "copy_binary", "copy_fallback"]) {
      await t.sql.unsafe(`CREATE TABLE ${table} (${COLUMNS.map(([c, type]) => `${c} ${type}`).join(", ")})`);
    }
  });
  afterAll(async () => {
    await t?.drop();
  });

  /**
   * In a transaction, as every COPY of the tool does. Run on the embedded database's pool, this
   * file's embedded tests ended with PGlite's exit(1) in 3 of 27 runs on one machine, in a
   * transaction in none of 21. The likely cause: another query of the pool's one connection (the
   * WAL bound's check, driver/embedded-wal.ts) sent right behind the COPY statement, which PGlite
   * did not survive; the connection now holds such a query until the COPY ends (embedded-socket.ts,
   * tested in embedded-socket.test.ts).
   */
  async function copyAsText(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    const all = ["k", ...names];
    const text = copyEncoder(info(table), all, { tally: { replaced: 0 } })(rows);
    await t.sql.begin(async (tx) =>
      pipeline(
        (async function* () {
          yield text;
        })(),
        await tx.unsafe(`COPY ${table} (${all.join(", ")}) FROM STDIN`).writable(),
      ),
    );
  }

  const contents = (table: string) => t.sql.unsafe<{ row: unknown }[]>(`SELECT to_jsonb(x) AS row FROM ${table} x ORDER BY k`);

  describe("COPY binary", () => {
    it("reads back exactly what COPY text does, for every column type and edge values", async () => {
      await copyAsText("copy_text", ROWS);
      const written = await t.sql.begin((tx) => copyRows(tx, info("copy_binary"), ["k", ...names], ROWS));
      expect(written).toEqual({ rows: ROWS.length, replaced: 0 });
      const text = await contents("copy_text");
      expect(text).toHaveLength(ROWS.length);
      expect(await contents("copy_binary")).toEqual(text);
      // The binary encoder took these rows (it did not fall back to text).
      expect(binaryEncoder(info("copy_binary"), ["k", ...names], { tally: { replaced: 0 } })(ROWS).length).toBeGreaterThan(0);
    });

    it("sends a COPY of thousands of rows, its statement, data and end, in one socket write that carries the encoded pieces themselves", async () => {
      // The pieces of a COPY's data are not joined or copied (by the writer or the driver): each is
      // a CopyData message of its own, behind a 5-byte header, and the statement, every piece and
      // the CopyDone leave in one corked write of the socket (patches/postgres+3.4.9.patch `writeParts`).
      const rows = Array.from({ length: 5000 }, (_, k) => ({ k, b: k * 3, d: k / 7, t: `row ${k}`, ok: k % 2 === 0, ts: k * 1000 }));
      await t.sql.unsafe("CREATE TABLE copy_pieces (LIKE copy_binary)");
      const pieces: Buffer[] = [];
      const writes = kind === "postgres" ? socketWrites() : null;
      let written: Awaited<ReturnType<typeof copyRows>>;
      try {
        written = await t.sql.begin((tx) => copyRows(capturingCopies(tx, pieces), info("copy_pieces"), ["k", ...names], rows));
      } finally {
        writes?.restore();
      }
      expect(written).toEqual({ rows: rows.length, replaced: 0 });
      // The binary header, the rows in three pieces of up to 2,000 and the trailer.
      expect(pieces).toHaveLength(5);
      const [back] = await t.sql.unsafe<{ n: number; sum: number }[]>("SELECT count(*)::int AS n, sum(b)::float8 AS sum FROM copy_pieces");
      expect(back).toEqual({ n: 5000, sum: (3 * 4999 * 5000) / 2 });
      if (!writes) return;
      const copy = writes.calls.filter((chunks) => chunks.some((c) => c.includes("copy_pieces")));
      expect(copy).toHaveLength(1);
      const [chunks] = copy as [Buffer[]];
      expect(chunks[0]!.subarray(0, 1).toString()).toBe("Q");
      // Every piece as it was encoded (the same buffer, not a copy), each behind its CopyData header.
      for (const piece of pieces) {
        const at = chunks.indexOf(piece);
        expect(at).toBeGreaterThan(0);
        expect([...chunks[at - 1]!]).toEqual([0x64, ...int32(piece.length + 4)]);
      }
      expect([...chunks.at(-1)!]).toEqual([0x63, 0, 0, 0, 4]);
    });

    it("sends a COPY after a statement made before it and still waiting in the driver's write buffer", async () => {
      // A short statement waits in postgres.js's buffer for the next turn of the event loop; a COPY
      // sent with its data meanwhile must leave after it, not before (the server runs them in order).
      await t.sql.unsafe("CREATE TABLE copy_order (LIKE copy_binary, seq bigserial)");
      await t.sql.begin(async (tx) => {
        const before = tx.unsafe("INSERT INTO copy_order (k) VALUES (-1)");
        before.execute();
        await copyRows(tx, info("copy_order"), ["k", ...names], [{ k: 0 }, { k: 1 }]);
        await before;
      });
      const order = await t.sql.unsafe<{ k: number }[]>("SELECT k FROM copy_order ORDER BY seq");
      expect(order.map((r) => r.k)).toEqual([-1, 0, 1]);
    });

    it("runs a query of the pool made during a transaction's large COPY outside the transaction", async () => {
      // A COPY larger than the socket's buffer makes the socket drain after its answer has come; the
      // driver then handed the connection, still reserved by the transaction, to the pool's queued
      // queries (the embedded database's pool has that one connection): they ran inside it.
      await t.sql.unsafe("CREATE TABLE copy_reserved (LIKE copy_binary)");
      const rows = Array.from({ length: 5000 }, (_, k) => ({ k, b: k, t: `row ${k}` }));
      let outside: Promise<{ n: number }[]> | undefined;
      const rolledBack = new Error("rolled back");
      await expect(
        t.sql.begin(async (tx) => {
          outside = t.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM copy_reserved`.execute();
          await copyRows(tx, info("copy_reserved"), ["k", ...names], rows);
          await tx`SELECT 1`;
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      expect(await outside).toEqual([{ n: 0 }]);
    });

    it("sends a COPY as text when a value has no exact binary form, and the server decides", async () => {
      const rows = [
        { k: 0, b: "123", d: "2.5", ts: "2025-01-14T14:00:00Z" },
        { k: 1, b: 7, d: 1.5 },
      ];
      expect(() => binaryEncoder(info("copy_fallback"), ["k", ...names], { tally: { replaced: 0 } })(rows)).toThrow(NotBinaryError);
      await t.sql.begin((tx) => copyRows(tx, info("copy_fallback"), ["k", ...names], rows));
      const back = (await contents("copy_fallback")).map((r) => r.row as Record<string, unknown>);
      expect(back.map((r) => [r.b, r.d, r.ts])).toEqual([
        [123, 2.5, "2025-01-14T14:00:00+00:00"],
        [7, 1.5, null],
      ]);
      // A fraction in an integer column is no exact int8 either: text, where the server refuses it.
      expect(() => binaryEncoder(info("copy_fallback"), ["b"], { tally: { replaced: 0 } })([{ b: 2.5 }])).toThrow(NotBinaryError);
    });
  });
});

/**
 * `tx` with the data of every COPY it sends pushed to `pieces` (the data goes with its statement:
 * the query's `copyData`). A COPY opened as a stream fails.
 */
function capturingCopies(tx: TxHandle, pieces: Buffer[]): TxHandle {
  return new Proxy(tx, {
    get(target, prop, receiver) {
      if (prop !== "unsafe") return Reflect.get(target, prop, receiver);
      return (...args: Parameters<TxHandle["unsafe"]>) => {
        const data = (args[2] as { copyData?: Buffer[] } | undefined)?.copyData;
        if (data) pieces.push(...data);
        const query = target.unsafe(...args);
        query.writable = () => Promise.reject(new Error("a COPY opened as a stream, not sent with its data"));
        return query;
      };
    },
  });
}

/** The chunks of every write the process's TCP sockets hand to the kernel, until `restore`. */
function socketWrites(): { calls: Buffer[][]; restore: () => void } {
  const proto = Socket.prototype as unknown as {
    _write: (chunk: Buffer, ...rest: unknown[]) => void;
    _writev: (chunks: { chunk: Buffer }[], ...rest: unknown[]) => void;
  };
  const { _write, _writev } = proto;
  const calls: Buffer[][] = [];
  proto._write = function (this: Socket, chunk, ...rest) {
    calls.push([chunk]);
    return _write.call(this, chunk, ...rest);
  };
  proto._writev = function (this: Socket, chunks, ...rest) {
    calls.push(chunks.map((c) => c.chunk));
    return _writev.call(this, chunks, ...rest);
  };
  return {
    calls,
    restore: () => {
      proto._write = _write;
      proto._writev = _writev;
    },
  };
}

function int32(n: number): number[] {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return [...b];
}
