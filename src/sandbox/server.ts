// The HTTP side: rate limit, latency, faults, routing, auth, window checks, payloads, request log.
import type { IncomingMessage, ServerResponse } from "node:http";
import { OPERATIONS } from "../catalogue/index.ts";
import { errorReply, type HandlerContext, HttpError, type Reply, type ServerState } from "./context.ts";
import { decideFault, EARLY_FAULTS, HTML_502, latencyFor, TokenBucket } from "./faults.ts";
import { type HostileMode, type HostileOptions, hostileModesFor, hostileWindow } from "./hostile.ts";
import { earlyHostileReply, type HeadedReply, sendBomb, trickle } from "./hostile-send.ts";
import { handlerFor } from "./payloads/index.ts";
import { type ServerProfile, servedOperations } from "./profile.ts";
import { type AuthSettings, authorize, checkWindow, rawWindow } from "./request.ts";
import { ConnectionIds, readRequest } from "./request-entry.ts";
import { buildRoutes } from "./router.ts";
import type { FaultKind, RequestLogEntry } from "./types.ts";

export interface ServerSettings {
  readonly state: ServerState;
  readonly auth: AuthSettings;
  /** Real clock; the server's own clock adds profile.clockOffsetMs. */
  readonly now: () => number;
  profile: ServerProfile;
  readonly latencyMs: readonly [number, number] | undefined;
  readonly rateLimitRps: number | undefined;
  readonly stallMs: number;
  /** Entries the request log keeps (oldest dropped first); a long-running `simulate` must not grow. */
  readonly logLimit: number;
  /**
   * Bench mode: 200 answers are kept and a repeated request (same path, body and credentials) is
   * answered from memory, so that a warmed sandbox spends no CPU generating data while the engine
   * is measured. Answers carry the server clock of their first request.
   */
  readonly cacheReplies?: boolean;
  faultRate: number;
  faultKinds: readonly FaultKind[];
  /** Lies and misbehaviour of a broken server (hostile.ts); null: an honest server. */
  hostile: HostileOptions | null;
}

const STATUS_TEXT: Partial<Record<FaultKind, string>> = {
  "500": "Internal Server Error",
  "502": "Bad Gateway",
  "503": "Service Unavailable",
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pieces of a chunked answer (profile `framing`). */
const CHUNK_BYTES = 16 * 1024;

/** A kept answer (cacheReplies), its body encoded once for all the times it is sent. */
type EncodedReply = Reply & { readonly bytes: Buffer };

export class SandboxServer {
  readonly log: RequestLogEntry[] = [];
  #counter = 0;
  readonly #connections = new ConnectionIds();
  #closed = false;
  readonly #stalls = new Set<NodeJS.Timeout>();
  readonly #bucket: TokenBucket | null;
  readonly #replies = new Map<string, EncodedReply>();
  #routes: ReturnType<typeof buildRoutes>;

  constructor(readonly settings: ServerSettings) {
    this.#bucket = settings.rateLimitRps ? new TokenBucket(settings.rateLimitRps) : null;
    this.#routes = buildRoutes(servedOperations(OPERATIONS, settings.profile));
  }

  setProfile(profile: ServerProfile): void {
    this.settings.profile = profile;
    this.#routes = buildRoutes(servedOperations(OPERATIONS, profile));
  }

  /** The server's clock: what etime is clamped to and what the Date header and `timestamp` say. */
  serverNow(): number {
    return this.settings.now() + this.settings.profile.clockOffsetMs;
  }

  #record(entry: RequestLogEntry): void {
    this.log.push(entry);
    // Trim in bulk so that the cost stays amortised O(1) per request.
    if (this.log.length > this.settings.logLimit * 1.5) this.log.splice(0, this.log.length - this.settings.logLimit);
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#stalls) clearTimeout(t);
    this.#stalls.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const n = this.#counter++;
    const s = this.settings;
    // Profile `connection: close`: the answer says so, and node closes the connection after it.
    if (s.profile.connection === "close") res.shouldKeepAlive = false;
    const url = new URL(req.url ?? "/", "http://sandbox");
    const { entry, route, body, bodyError, bodyText } = await readRequest(req, url, this.#routes, s.auth, this.#connections.of(req.socket));
    const hostile = hostileModesFor(s.hostile, s.state.seed, n, entry.opId);
    if (hostile.length > 0) entry.hostile = hostile;
    const wait = this.#bucket?.take() ?? 0;
    if (wait > 0)
      return this.#send(res, entry, { ...errorReply(429, "Too many requests"), headers: { "retry-after": String(wait) } }, "rate-limit");
    const delay = latencyFor(s.state.seed, n, s.latencyMs);
    if (delay > 0) await sleep(delay);
    if (this.#closed) return;
    const fault = decideFault(s.state.seed, n, s.faultRate, s.faultKinds);
    if (fault && EARLY_FAULTS.has(fault)) return this.#early(req, res, entry, fault);
    const early = s.hostile && earlyHostileReply(hostile, s.hostile, this.serverNow(), url.pathname);
    if (early) return this.#send(res, entry, early);
    let reply: Reply;
    if (route.kind === "none") reply = errorReply(404, "[F] not found");
    else if (route.kind === "wrong-method") reply = errorReply(405, "[F] method not allowed");
    else
      reply = bodyError
        ? errorReply(bodyError.status, bodyError.message)
        : this.#respondCached(route.op, route.params, url.searchParams, body, req, bodyText, hostile);
    // A 200 carrying an error object: must be treated as an error, not as data (docs/api-notes.md, "Errors and rate limits").
    if (fault === "error-body") return this.#send(res, entry, { ...errorReply(500, "temporarily unavailable"), status: 200 }, fault);
    if (fault === "truncated") return this.#truncated(res, entry, reply);
    if (hostile.length > 0 && this.#hostileSend(res, entry, reply, hostile)) return;
    this.#send(res, entry, reply);
  }

  /** Bombs and trickles; false when neither applies (the reply is sent as usual). */
  #hostileSend(res: ServerResponse, entry: RequestLogEntry, reply: Reply, modes: readonly HostileMode[]): boolean {
    const date = new Date(this.serverNow()).toUTCString();
    const bomb = modes.includes("gzip-bomb") || modes.includes("deflate-bomb");
    const head = modes.includes("trickle-head");
    if (!bomb && !head && !modes.includes("trickle")) return false;
    entry.status = bomb ? 200 : reply.status;
    this.#record(entry);
    if (this.#closed || res.destroyed) return true;
    if (!sendBomb(res, modes, date)) trickle(res, reply, this.settings.hostile?.trickleMs ?? 1000, date, head);
    return true;
  }

  #respondCached(
    op: HandlerContext["op"],
    params: Record<string, string>,
    query: URLSearchParams,
    body: Record<string, unknown>,
    req: IncomingMessage,
    bodyText: string,
    hostile: readonly HostileMode[],
  ): Reply {
    if (!this.settings.cacheReplies || hostile.length > 0) return this.#respond(op, params, query, body, req, hostile);
    const { tokenHeader, pcodeHeader } = this.settings.auth;
    const key = [req.method, req.url, bodyText, req.headers[tokenHeader], req.headers[pcodeHeader]].join("\u0000");
    const hit = this.#replies.get(key);
    if (hit) return hit;
    const reply = this.#respond(op, params, query, body, req, []);
    if (reply.status !== 200) return reply;
    const kept = { ...reply, bytes: Buffer.from(reply.body) };
    this.#replies.set(key, kept);
    return kept;
  }

  #respond(
    op: HandlerContext["op"],
    params: Record<string, string>,
    query: URLSearchParams,
    body: Record<string, unknown>,
    req: IncomingMessage,
    hostile: readonly HostileMode[],
  ): Reply {
    try {
      const now = this.serverNow();
      const world = authorize(op, req.headers, this.settings.auth, this.settings.profile);
      const raw = rawWindow(op, params, query, body);
      const asked = raw ? checkWindow(op, raw, now) : null;
      // Echo modes: the server answers (and echoes) another window than the one asked for.
      const shifted = asked && hostileWindow(hostile, op, asked.stime, asked.etime);
      const moved = shifted && (shifted[0] !== asked.stime || shifted[1] !== asked.etime);
      const window = moved ? checkWindow(op, { stime: shifted![0], etime: shifted![1] }, now) : asked;
      const ctx: HandlerContext = {
        op,
        state: this.settings.state,
        profile: this.settings.profile,
        world,
        params,
        query,
        body,
        window,
        now,
      };
      const handler = handlerFor(ctx, hostile);
      return handler ? handler() : errorReply(404, "[F] operation not served by the sandbox");
    } catch (e) {
      if (e instanceof HttpError) return errorReply(e.status, e.message);
      return errorReply(500, `[F] sandbox error: ${(e as Error).message}`);
    }
  }

  /**
   * Sends the body as bytes: Node's http joins the head and a string body into one string, a copy of
   * the body (flattened, in the large-object space when it is over 128 KiB) on every answer.
   */
  #send(res: ServerResponse, entry: RequestLogEntry, reply: HeadedReply & Partial<EncodedReply>, fault?: RequestLogEntry["fault"]): void {
    entry.status = reply.status;
    if (fault) entry.fault = fault;
    this.#record(entry);
    if (this.#closed || res.destroyed) return;
    const bytes = reply.bytes ?? Buffer.from(reply.body);
    const chunked = this.settings.profile.framing === "chunked";
    const headers: Record<string, string | number> = {
      "content-type": reply.contentType,
      ...(chunked ? {} : { "content-length": bytes.length }),
      // The server's own clock (node would stamp the real one): clients measure the offset from it.
      date: new Date(this.serverNow()).toUTCString(),
    };
    Object.assign(headers, reply.headers);
    res.writeHead(reply.status, headers);
    if (chunked) for (let at = 0; at < bytes.length; at += CHUNK_BYTES) res.write(bytes.subarray(at, at + CHUNK_BYTES));
    res.end(chunked ? undefined : bytes);
  }

  /** Half of the real body, then a clean end: a 200 whose JSON does not parse. */
  #truncated(res: ServerResponse, entry: RequestLogEntry, reply: Reply): void {
    entry.status = reply.status;
    entry.fault = "truncated";
    this.#record(entry);
    if (this.#closed || res.destroyed) return;
    const bytes = Buffer.from(reply.body);
    res.writeHead(reply.status, { "content-type": reply.contentType });
    res.end(bytes.subarray(0, Math.floor(bytes.length / 2)));
  }

  #early(req: IncomingMessage, res: ServerResponse, entry: RequestLogEntry, fault: FaultKind): void {
    switch (fault) {
      case "429":
        this.#send(res, entry, { ...errorReply(429, "Too many requests"), headers: { "retry-after": "1" } }, fault);
        return;
      case "html":
        this.#send(res, entry, { status: 502, body: HTML_502, contentType: "text/html" }, fault);
        return;
      case "reset":
        entry.fault = fault;
        this.#record(entry);
        req.socket.destroy();
        return;
      case "stall": {
        entry.fault = fault;
        this.#record(entry);
        // Never answer; close the socket after stallMs (or when the client gives up first).
        const timer = setTimeout(() => {
          this.#stalls.delete(timer);
          req.socket.destroy();
        }, this.settings.stallMs);
        this.#stalls.add(timer);
        res.on("close", () => {
          clearTimeout(timer);
          this.#stalls.delete(timer);
        });
        return;
      }
      default:
        this.#send(res, entry, errorReply(Number(fault), STATUS_TEXT[fault] ?? "Internal Server Error"), fault);
    }
  }
}
