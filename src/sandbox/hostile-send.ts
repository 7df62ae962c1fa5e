// The hostile modes that are about the HTTP exchange rather than the data (hostile.ts): a
// Retry-After, a redirect, a compressed bomb, a body that trickles for ever.
import { type ServerResponse, STATUS_CODES } from "node:http";
import { deflateSync, gzipSync } from "node:zlib";
import { errorReply, type Reply } from "./context.ts";
import type { HostileMode, HostileOptions } from "./hostile.ts";

/** A reply with the extra headers some modes send. */
export type HeadedReply = Reply & { readonly headers?: Readonly<Record<string, string>> };

/** Where `redirect` sends the client: another host, which must never see the token. */
export const REDIRECT_ORIGIN = "http://elsewhere.invalid";

/** The answer of the modes that answer before the request is handled; null when none applies. */
export function earlyHostileReply(modes: readonly HostileMode[], h: HostileOptions, serverNow: number, path: string): HeadedReply | null {
  const seconds = h.retryAfterS ?? 120;
  if (modes.includes("retry-after")) return { ...errorReply(503, "Service Unavailable"), headers: { "retry-after": String(seconds) } };
  if (modes.includes("retry-after-date"))
    return { ...errorReply(503, "Service Unavailable"), headers: { "retry-after": new Date(serverNow + seconds * 1000).toUTCString() } };
  if (modes.includes("redirect")) return { ...errorReply(307, "Temporary Redirect"), headers: { location: `${REDIRECT_ORIGIN}${path}` } };
  return null;
}

const BOMB_BYTES = 64 * 1024 * 1024;
let bombs: { gzip: Buffer; deflate: Buffer } | null = null;

/** 64 MiB of NULs, compressed once (about 64 KiB each) and kept. */
function bombOf(kind: "gzip" | "deflate"): Buffer {
  if (!bombs) {
    const zeros = Buffer.alloc(BOMB_BYTES);
    bombs = { gzip: gzipSync(zeros), deflate: deflateSync(zeros) };
  }
  return bombs[kind];
}

/** Sends a compressed bomb when a bomb mode applies; false when none does. */
export function sendBomb(res: ServerResponse, modes: readonly HostileMode[], date: string): boolean {
  const kind = modes.includes("gzip-bomb") ? "gzip" : modes.includes("deflate-bomb") ? "deflate" : null;
  if (!kind) return false;
  const body = bombOf(kind);
  res.writeHead(200, { "content-type": "application/json", "content-encoding": kind, "content-length": body.length, date }).end(body);
  return true;
}

/**
 * Sends the headers at once (`trickle`) or a byte at a time with the rest (`trickle-head`, on the
 * raw socket), then the body one byte per `everyMs`, then a space per `everyMs` for ever: a client
 * whose only deadlines are per read never gives up. Stops when the client does.
 */
export function trickle(res: ServerResponse, reply: Reply, everyMs: number, date: string, head: boolean): void {
  const socket = res.socket;
  if (!socket) return;
  let bytes = Buffer.from(reply.body);
  if (head) {
    // No content-length: the body ends when the connection does, which it never does.
    const status = `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ""}\r\n`;
    bytes = Buffer.concat([
      Buffer.from(`${status}content-type: ${reply.contentType}\r\ndate: ${date}\r\nconnection: close\r\n\r\n`),
      bytes,
    ]);
  } else {
    res.writeHead(reply.status, { "content-type": reply.contentType, date });
    res.flushHeaders();
  }
  // Raw bytes for the head form; through the response (chunked framing) otherwise.
  const write = head ? (b: Buffer | string) => socket.write(b) : (b: Buffer | string) => res.write(b);
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    write(at < bytes.length ? bytes.subarray(at, ++at) : " ");
  }, everyMs);
  socket.on("close", () => clearInterval(timer));
}
