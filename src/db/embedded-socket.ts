// A connection to the embedded PGlite without a network: a Duplex that postgres.js takes as its
// socket (its `socket` option). Protocol messages written to it go to PGlite's backend in this
// process, its answers come back as data. What pglite-socket does over loopback TCP, minus the
// kernel, the server and a few event-loop turns per message (a third of an embedded run's time).
import { Duplex } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;

/**
 * A new connection to `pg`. PGlite is one session: a connection that ends inside a transaction
 * rolls it back, as a server does when a client goes away.
 */
export function pgliteConnection(pg: PGlite): Duplex & { readyState: string } {
  let pending: Buffer = Buffer.alloc(0);
  let startup = true;
  let state = "open";
  let inTransaction = false;

  const run = async (message: Buffer): Promise<void> => {
    await pg.runExclusive(async () => {
      await pg.execProtocolRawStream(new Uint8Array(message), {
        onRawData: (data: Uint8Array) => {
          if (data.length > 0 && state === "open") socket.push(Buffer.from(data));
        },
      });
      inTransaction = pg.isInTransaction();
    });
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
      if (!startup && out[out.length - 1]![0] === 0x58) {
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
    if (!inTransaction) return;
    inTransaction = false;
    await pg.exec("ROLLBACK").catch(() => {});
  };

  const socket = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const messages = takeMessages();
      (async () => {
        for (const message of messages) await run(message);
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
