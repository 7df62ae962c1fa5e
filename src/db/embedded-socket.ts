// A connection to the embedded PGlite without a network: a Duplex that postgres.js takes as its
// socket (its `socket` option). Protocol messages written to it go to PGlite's backend in this
// process, its answers come back as data. What pglite-socket does over loopback TCP, minus the
// kernel, the server and a few event-loop turns per message (a third of an embedded run's time).
//
// COPY FROM STDIN: PGlite runs a COPY only when its data arrives in the same call as the
// statement (a statement alone, waiting for data, kills its backend: "protocol synchronization
// was lost"). So the connection answers the statement itself and holds the data until the client
// ends the copy, then hands statement + data + end to PGlite in one call: every answer the client
// sees (the copy-in response, CommandComplete or the ErrorResponse with its fields, ReadyForQuery
// with the transaction status) is the backend's own. The copy-in response is sent at once, as a
// server does; it comes from a COPY of no rows run first, which also fails exactly as the real
// one would when the statement itself is wrong.
import { Duplex } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const QUERY = 0x51; // Q
const COPY_DATA = 0x64; // d
const COPY_DONE = 0x63; // c
const COPY_IN_RESPONSE = 0x47; // G
const TERMINATE = 0x58; // X
/** What a backend in copy-in mode reads without leaving it: CopyData, Flush, Sync. */
const STAYS_IN_COPY = new Set([COPY_DATA, 0x48, 0x53]);

const COPY_FROM_STDIN = /^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i;
const BINARY_OPTION = /\bstdin\b[\s\S]*\bbinary\b/i;
/** The data of a COPY of no rows in binary format: header (signature, flags, extension) and trailer. */
const EMPTY_BINARY = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

function message(type: number, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = type;
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

/** The first message of `data` and the rest. */
function firstMessage(data: Buffer): { type: number; head: Buffer; rest: Buffer } {
  const length = data.length >= 5 ? 1 + data.readInt32BE(1) : data.length;
  return { type: data[0] ?? -1, head: data.subarray(0, length), rest: data.subarray(length) };
}

/** The SQL of a Query message (its body is a NUL-terminated string). */
const queryText = (m: Buffer): string => m.toString("utf8", 5, m.length - 1);

/**
 * A new connection to `pg`. PGlite is one session: a connection that ends inside a transaction
 * rolls it back, as a server does when a client goes away.
 */
export function pgliteConnection(pg: PGlite): Duplex & { readyState: string } {
  let pending: Buffer = Buffer.alloc(0);
  let startup = true;
  let state = "open";
  let inTransaction = false;
  /** The COPY statement in progress and the messages that followed it. */
  let copy: { statement: Buffer; messages: Buffer[] } | null = null;

  /** Runs protocol bytes on the backend; returns its answer. */
  const exchange = async (bytes: Buffer): Promise<Buffer> => {
    const out: Buffer[] = [];
    await pg.runExclusive(async () => {
      await pg.execProtocolRawStream(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), {
        onRawData: (data: Uint8Array) => void out.push(Buffer.from(data)),
      });
      inTransaction = pg.isInTransaction();
    });
    return Buffer.concat(out);
  };
  const answer = (data: Buffer): void => {
    if (data.length > 0 && state === "open") socket.push(data);
  };

  const handle = async (m: Buffer): Promise<void> => {
    if (copy) {
      copy.messages.push(m);
      if (STAYS_IN_COPY.has(m[0]!)) return;
      // CopyDone, CopyFail or any other message ends copy-in mode: the backend sees it all now.
      const { statement, messages } = copy;
      copy = null;
      const reply = await exchange(Buffer.concat([statement, ...messages]));
      const first = firstMessage(reply);
      // Its copy-in response went out when the statement came.
      return answer(first.type === COPY_IN_RESPONSE ? first.rest : reply);
    }
    if (m[0] === QUERY && COPY_FROM_STDIN.test(queryText(m))) {
      const none = BINARY_OPTION.test(queryText(m)) ? [message(COPY_DATA, EMPTY_BINARY)] : [];
      const probe = await exchange(Buffer.concat([m, ...none, message(COPY_DONE, Buffer.alloc(0))]));
      const first = firstMessage(probe);
      if (first.type !== COPY_IN_RESPONSE) return answer(probe);
      copy = { statement: m, messages: [] };
      return answer(first.head);
    }
    answer(await exchange(m));
  };

  /** Complete messages at the head of `pending` (the first one without a type byte: startup). */
  const takeMessages = (): Buffer[] => {
    const out: Buffer[] = [];
    for (;;) {
      const head = startup ? 0 : 1;
      if (pending.length < head + 4) break;
      const length = head + pending.readInt32BE(head);
      if (pending.length < length) break;
      out.push(pending.subarray(0, length));
      pending = pending.subarray(length);
      if (!startup && out[out.length - 1]![0] === TERMINATE) {
        // Terminate: the client is done; PGlite's session stays for the next connection.
        out.pop();
        socket.push(null);
        break;
      }
      if (startup) {
        const code = out[out.length - 1]!.length >= 8 ? out[out.length - 1]!.readInt32BE(4) : 0;
        // No TLS here: "N", and the client goes on in clear; a cancel request is not supported.
        if (code === SSL_REQUEST) {
          out.pop();
          socket.push(Buffer.from("N"));
        } else if (code === CANCEL_REQUEST) {
          out.pop();
        } else startup = false;
      }
    }
    return out;
  };

  const rollbackIfOpen = async (): Promise<void> => {
    copy = null;
    if (!inTransaction) return;
    inTransaction = false;
    await pg.exec("ROLLBACK").catch(() => {});
  };

  const socket = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const messages = takeMessages();
      (async () => {
        for (const m of messages) await handle(m);
      })().then(() => callback(), callback);
    },
    read() {},
    final(callback) {
      rollbackIfOpen().then(() => {
        socket.push(null);
        callback();
      }, callback);
    },
    destroy(error, callback) {
      state = "closed";
      rollbackIfOpen().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
  Object.defineProperty(socket, "readyState", { get: () => state });
  return socket as Duplex & { readyState: string };
}
