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
// A statement sent on the connection while its COPY is still taking data (another query of a
// pool's one connection, pipelined behind a COPY outside a transaction) is held until the COPY
// ends, then run: handed to PGlite inside the COPY it ended the process's database (exit(1)),
// where a server gives a pool another connection.
import { Duplex } from "node:stream";
import type { PGlite } from "@electric-sql/pglite";

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const QUERY = 0x51; // Q
const COPY_DATA = 0x64; // d
const COPY_DONE = 0x63; // c
const COPY_FAIL = 0x66; // f
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

/** The COPY statement in progress, the messages of its copy-in, and those held for after it. */
interface CopyIn {
  readonly statement: Buffer;
  readonly messages: Buffer[];
  readonly after: Buffer[];
}

/**
 * One connection: protocol bytes in, the backend's answers out. PGlite is one session: a
 * connection that ends inside a transaction rolls it back, as a server does when a client goes away.
 */
class PgliteSocket extends Duplex {
  #pending: Buffer = Buffer.alloc(0);
  #startup = true;
  #state = "open";
  #inTransaction = false;
  #copy: CopyIn | null = null;
  /** The copy-in response of each COPY statement text seen (a few per table). */
  readonly #copyResponses = new Map<string, Buffer>();

  constructor(
    private readonly pg: PGlite,
    private readonly guard: () => void,
  ) {
    super();
  }

  get readyState(): string {
    return this.#state;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._writev([{ chunk }], callback);
  }

  /** Every write the client made while the backend was busy with the one before: handled together. */
  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    const bytes = chunks.map((c) => c.chunk);
    if (this.#pending.length > 0) bytes.unshift(this.#pending);
    this.#pending = bytes.length === 1 ? bytes[0]! : Buffer.concat(bytes);
    this.#run(this.#takeMessages()).then(() => callback(), callback);
  }

  override _read(): void {}

  override _final(callback: (error?: Error | null) => void): void {
    this.#rollbackIfOpen().then(() => {
      this.push(null);
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#state = "closed";
    this.#rollbackIfOpen().then(
      () => callback(error),
      () => callback(error),
    );
  }

  /**
   * Runs protocol messages on the backend in one call; returns its answer. PGlite's file system
   * writes through to the files as Postgres writes (its sync step does nothing on Node): it is
   * skipped, and with it a second turn of PGlite's lock per call.
   */
  async #exchange(messages: readonly Buffer[]): Promise<Buffer> {
    // Below the disk's floor nothing reaches PGlite (embedded-disk.ts): the connection fails with why.
    this.guard();
    const bytes = messages.length === 1 ? messages[0]! : Buffer.concat(messages);
    const out: Buffer[] = [];
    await this.pg.runExclusive(async () => {
      await this.pg.execProtocolRawStream(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), {
        syncToFs: false,
        onRawData: (data: Uint8Array) => void out.push(Buffer.from(data)),
      });
      this.#inTransaction = this.pg.isInTransaction();
    });
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  #answer(data: Buffer): void {
    if (data.length > 0 && this.#state === "open") this.push(data);
  }

  /**
   * The messages of one write, in order. Those that need no COPY handling go to the backend
   * together, in one call (a pipelined transaction's statements, each statement's Parse, Bind,
   * Execute and Sync), as a server reads them from one packet: each call costs a turn of PGlite's
   * lock and main loop.
   */
  async #run(messages: readonly Buffer[]): Promise<void> {
    let batch: Buffer[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const sent = batch;
      batch = [];
      this.#answer(await this.#exchange(sent));
    };
    for (const m of messages) {
      if (this.#copy) await this.#continueCopy(this.#copy, m);
      else if ((m[0] === QUERY && COPY_FROM_STDIN.test(queryText(m))) || m[0] === 0) {
        // A COPY, or the startup message (PGlite reads it alone): after what came before it.
        await flush();
        if (m[0] === 0) this.#answer(await this.#exchange([m]));
        else await this.#startCopy(m);
      } else batch.push(m);
    }
    await flush();
  }

  /**
   * A COPY FROM STDIN: a COPY of no rows answers for it now, once per statement text (its
   * copy-in response, the formats of its columns, is the same each time; a table gone meanwhile
   * fails the real COPY, with the backend's own error); the statement waits for its data.
   */
  async #startCopy(m: Buffer): Promise<void> {
    const text = queryText(m);
    let response = this.#copyResponses.get(text);
    if (!response) {
      const none = BINARY_OPTION.test(text) ? [message(COPY_DATA, EMPTY_BINARY)] : [];
      const probe = await this.#exchange([m, ...none, message(COPY_DONE, Buffer.alloc(0))]);
      const first = firstMessage(probe);
      if (first.type !== COPY_IN_RESPONSE) return this.#answer(probe);
      response = Buffer.from(first.head);
      if (this.#copyResponses.size >= 256) this.#copyResponses.clear();
      this.#copyResponses.set(text, response);
    }
    this.#copy = { statement: m, messages: [], after: [] };
    this.#answer(response);
  }

  /**
   * A message while a COPY takes data: its data (and a Flush or Sync among it) joins the COPY;
   * another statement's messages, from the first on, are held; CopyDone or CopyFail hands the
   * COPY to the backend, then the held messages.
   */
  async #continueCopy(copy: CopyIn, m: Buffer): Promise<void> {
    const type = m[0]!;
    const ends = type === COPY_DONE || type === COPY_FAIL;
    if (!ends && type !== COPY_DATA && (copy.after.length > 0 || !STAYS_IN_COPY.has(type))) {
      copy.after.push(m);
      return;
    }
    copy.messages.push(m);
    if (!ends) return;
    this.#copy = null;
    const reply = await this.#exchange([copy.statement, ...copy.messages]);
    const first = firstMessage(reply);
    // Its copy-in response went out when the statement came.
    this.#answer(first.type === COPY_IN_RESPONSE ? first.rest : reply);
    if (copy.after.length > 0) await this.#run(copy.after);
  }

  /** Complete messages at the head of the bytes received (the first one without a type byte: startup). */
  #takeMessages(): Buffer[] {
    const out: Buffer[] = [];
    for (;;) {
      const head = this.#startup ? 0 : 1;
      if (this.#pending.length < head + 4) break;
      const length = head + this.#pending.readInt32BE(head);
      if (this.#pending.length < length) break;
      const m = this.#pending.subarray(0, length);
      this.#pending = this.#pending.subarray(length);
      if (this.#startup) {
        if (this.#keepsStartup(m)) out.push(m);
      } else if (m[0] === TERMINATE) {
        // Terminate: the client is done; PGlite's session stays for the next connection.
        this.push(null);
        break;
      } else out.push(m);
    }
    return out;
  }

  /**
   * Whether a message of the startup phase goes to the backend. No TLS here: "N", and the client
   * goes on in clear; a cancel request is not supported.
   */
  #keepsStartup(m: Buffer): boolean {
    const code = m.length >= 8 ? m.readInt32BE(4) : 0;
    if (code === SSL_REQUEST) this.push(Buffer.from("N"));
    else if (code !== CANCEL_REQUEST) this.#startup = false;
    return code !== SSL_REQUEST && code !== CANCEL_REQUEST;
  }

  async #rollbackIfOpen(): Promise<void> {
    this.#copy = null;
    if (!this.#inTransaction) return;
    this.#inTransaction = false;
    await this.pg.exec("ROLLBACK").catch(() => {});
  }
}

/** A new connection to `pg`; `guard` throws when PGlite must not be handed more work (the disk's floor). */
export function pgliteConnection(pg: PGlite, guard: () => void): Duplex & { readonly readyState: string } {
  return new PgliteSocket(pg, guard);
}
