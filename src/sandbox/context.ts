// What a payload handler gets: the matched operation, the project, parameters and the window.
import type { OperationDef } from "../catalogue/types.ts";
import type { FactCache } from "./generate/facts.ts";
import type { ServerProfile } from "./profile.ts";
import type { ProjectWorld } from "./world.ts";

export interface ServerState {
  readonly seed: number;
  readonly worlds: readonly ProjectWorld[];
  readonly cache: FactCache;
  readonly maxRecords: number;
  readonly accountEmail: string;
}

export interface RequestWindow {
  readonly stime: number;
  /** etime clamped to the server clock. */
  readonly etime: number;
  /** Complete cubes with start in [stime, etime). */
  readonly cubes: readonly number[];
}

export interface HandlerContext {
  readonly op: OperationDef;
  readonly state: ServerState;
  readonly profile: ServerProfile;
  /** Project of the pcode header (null for account operations). */
  readonly world: ProjectWorld | null;
  /** Path placeholders, URI-decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: Readonly<Record<string, unknown>>;
  readonly window: RequestWindow | null;
  readonly now: number;
}

export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
}

export function json(value: unknown, status = 200): Reply {
  return { status, body: JSON.stringify(value), contentType: "application/json;charset=UTF-8" };
}

/** Error bodies like the ones seen in the wild: {"msg":"[F] Invalid token","code":400}. */
export function errorReply(status: number, msg: string): Reply {
  return json({ msg, code: status }, status);
}

export function text(body: string): Reply {
  return { status: 200, body, contentType: "text/plain;charset=UTF-8" };
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function worldOf(ctx: HandlerContext): ProjectWorld {
  if (!ctx.world) throw new HttpError(401, "[F] Invalid pcode");
  return ctx.world;
}

export function windowOf(ctx: HandlerContext): RequestWindow {
  if (!ctx.window) throw new HttpError(400, "[F] stime and etime are required");
  return ctx.window;
}
