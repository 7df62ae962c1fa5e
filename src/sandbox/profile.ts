// Server profiles: every point the spec leaves open, resolved one way or the other, so that tests
// take both roads (a client that only works when the sandbox agrees with it on every open point
// fails against the first real server that does not). The default is the strict resolution a real
// server most likely has: project token only, the docs' groups path, the sample's `oids`.
import type { OperationDef } from "../catalogue/types.ts";

/** Which token the operations whose token the spec leaves open (range, series) accept. */
export type RangeTokenProfile = "project" | "account" | "both";

export interface ServerProfile {
  /**
   * Range and series operations: the spec's parameter tables name the account token, its samples
   * and the hosted service's client send the project token. Default `project`.
   */
  readonly rangeToken: RangeTokenProfile;
  /** Groups list: `v2` = /open/api/v2/json/groups (spec), `v1` = /open/api/json/groups (docs sample). Default v1. */
  readonly groupsPath: "v1" | "v2";
  /** Agent filter of event history: `oid` (parameter table) or `oids` (sample request); the other is ignored. Default `oids`. */
  readonly eventAgentParam: "oid" | "oids";
  /** Whether the aggregated statistics answer at the default method/path (false: 404, an override is needed). */
  readonly statsAtDefaultPath: boolean;
  /** Server clock minus the real clock, ms (negative: the server's clock lags). */
  readonly clockOffsetMs: number;
  /**
   * How an answer's body is framed, which HTTP leaves to the server: `length` (a Content-Length, the
   * body in one write) or `chunked` (chunked transfer encoding, in pieces of CHUNK_BYTES, as servers
   * stream large answers). Default `length`.
   */
  readonly framing: "length" | "chunked";
  /**
   * Whether a connection outlives its answer, which HTTP leaves to the server: `keep-alive` (the
   * client sends its next request on it) or `close` (each answer says `Connection: close` and the
   * server closes the connection after it, as servers behind some proxies do). Default `keep-alive`.
   */
  readonly connection: "keep-alive" | "close";
}

export const DEFAULT_PROFILE: ServerProfile = {
  rangeToken: "project",
  groupsPath: "v1",
  eventAgentParam: "oids",
  statsAtDefaultPath: true,
  clockOffsetMs: 0,
  framing: "length",
  connection: "keep-alive",
};

export const GROUPS_PATHS = { v1: "/open/api/json/groups", v2: "/open/api/v2/json/groups" } as const;

/** The operations as this server serves them: the groups path moved, statistics withdrawn. */
export function servedOperations(ops: readonly OperationDef[], profile: ServerProfile): OperationDef[] {
  return ops
    .filter((op) => profile.statsAtDefaultPath || op.area !== "stats")
    .map((op) => (op.id === "account.groups" ? { ...op, path: GROUPS_PATHS[profile.groupsPath] } : op));
}

/** Token kinds an operation accepts under this profile. */
export function acceptedTokens(op: OperationDef, profile: ServerProfile): readonly ("project" | "account")[] {
  if (!op.altToken) return [op.token];
  return profile.rangeToken === "both" ? ["project", "account"] : [profile.rangeToken];
}

/** Parses `--range-token`, `--groups-path`, ... values; throws with the allowed values. */
export function parseProfile(opts: {
  rangeToken?: unknown;
  groupsPath?: unknown;
  eventAgentParam?: unknown;
  stats?: unknown;
  clockOffset?: unknown;
  framing?: unknown;
  connection?: unknown;
}): Partial<ServerProfile> {
  const pick = <T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined => {
    if (value === undefined) return undefined;
    if (!allowed.includes(value as T)) throw new Error(`--${name}: expected one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
    return value as T;
  };
  const out: { -readonly [K in keyof ServerProfile]?: ServerProfile[K] } = {};
  const rangeToken = pick("range-token", opts.rangeToken, ["project", "account", "both"] as const);
  if (rangeToken) out.rangeToken = rangeToken;
  const groupsPath = pick("groups-path", opts.groupsPath, ["v1", "v2"] as const);
  if (groupsPath) out.groupsPath = groupsPath;
  const eventAgentParam = pick("event-agent-param", opts.eventAgentParam, ["oid", "oids"] as const);
  if (eventAgentParam) out.eventAgentParam = eventAgentParam;
  const stats = pick("stats", opts.stats, ["served", "not-found"] as const);
  if (stats) out.statsAtDefaultPath = stats === "served";
  const framing = pick("framing", opts.framing, ["length", "chunked"] as const);
  if (framing) out.framing = framing;
  const connection = pick("connection", opts.connection, ["keep-alive", "close"] as const);
  if (connection) out.connection = connection;
  if (opts.clockOffset !== undefined) {
    const m = /^(-?)(\d+)(ms|s|m|h)?$/.exec(String(opts.clockOffset).trim());
    if (!m) throw new Error(`--clock-offset: expected e.g. -3h, 90s, 1500ms; got ${JSON.stringify(opts.clockOffset)}`);
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[3] ?? "ms") as "ms" | "s" | "m" | "h"];
    out.clockOffsetMs = (m[1] ? -1 : 1) * Number(m[2]) * unit;
  }
  return out;
}
