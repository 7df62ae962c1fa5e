// Public types of the sandbox library (see index.ts).
import type { HostileMode, HostileOptions } from "./hostile.ts";
import type { ServerProfile } from "./profile.ts";

/** Injectable faults. */
export type FaultKind = "429" | "500" | "502" | "503" | "reset" | "stall" | "truncated" | "html" | "error-body";
export const FAULT_KINDS: readonly FaultKind[] = ["429", "500", "502", "503", "reset", "stall", "truncated", "html", "error-body"];

export interface SandboxOptions {
  /** How the server resolves the points the spec leaves open (profile.ts); default the strict profile. */
  profile?: Partial<ServerProfile>;
  /** Data seed (default 1). Same seed, same clock, same requests: byte-identical responses. */
  seed?: number;
  /** Number of projects (default 3). Codes: 1001, 3000000001 (beyond 2^31), 1002, 1003, ... */
  projects?: number;
  accountToken?: string;
  /** Tokens by pcode; default derived from the seed. */
  projectTokens?: Record<number, string>;
  /** Record cap of aggregated statistics and v1 range records (server open_api_max_records, default 10000). */
  maxRecords?: number;
  /** Injected latency, uniform in [a, b] ms, deterministic per request. */
  latencyMs?: [number, number];
  /** Fraction of requests answered with a fault (default 0). */
  faultRate?: number;
  /** Fault mix (default: all kinds). */
  faults?: FaultKind[];
  /** Token bucket (capacity max(1, rps)); exceeding it answers 429 with Retry-After. */
  rateLimitRps?: number;
  /** Real clock (default Date.now); the server's clock is this plus profile.clockOffsetMs: etime is clamped to it, only complete cubes are served. */
  now?: () => number;
  tokenHeader?: string;
  pcodeHeader?: string;
  /** Distinct keys per type in each project's daily burst cube (default 12000; 0 = no burst). At most 65536. */
  burstKeys?: number;
  /** How long a "stall" fault holds the request before closing the socket (default 30000 ms). */
  stallMs?: number;
  /** Cube-fact cache bound, in facts held (default DEFAULT_CACHE_FACTS, about 26 MiB); what falls out is generated again. */
  cacheFacts?: number;
  /** Request log entries kept, oldest dropped first (default: all; `simulate` keeps 10,000). */
  logLimit?: number;
  /** Bench mode: answer a repeated request from memory (see ServerSettings.cacheReplies). */
  cacheReplies?: boolean;
  /** Lies and misbehaviour of a broken or hostile server (hostile.ts); default none. */
  hostile?: HostileOptions;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  /** Catalogue operation id; null when no operation matched (404). */
  opId: string | null;
  pcode: number | null;
  /** Requested window (path, query or body), before clamping; null when none. */
  stime: number | null;
  etime: number | null;
  /** HTTP status sent; 0 when none was (reset, stall). */
  status: number;
  fault?: FaultKind | "rate-limit";
  /** Hostile modes this request got (hostile.ts). */
  hostile?: HostileMode[];
  /** Wall-clock time the entry was written (ms). */
  at: number;
  /** The TCP connection the request came on: 1 for the server's first, 2 for its second, ... */
  connection: number;
}

export type JsonRecord = Record<string, unknown>;

export interface HostPortFilter {
  host: string;
  port: string | number;
}

/** The exact data the server holds, independent of how a range is windowed. */
export interface GroundTruth {
  /**
   * All records of an aggregate operation (stat.*, range.*, range.heap_use.*) for the cubes with
   * start in [stime, etime), as the server prints them, in its default order, never capped and
   * never clamped to the server clock. `filter` is required for range.httpc.filtered and optional
   * for stat.httpc.
   */
  records(pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter): JsonRecord[];
  /** records(...).length: the `total` the server reports for a window covering the same cubes. */
  total(pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter): number;
  /** Sum of the count field (count / count_total / Total) per natural key (keys.ts naturalKey). */
  countsByKey(pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter): Map<string, number>;
  /** Sum of the count field over all records. */
  totalCount(pcode: number, opId: string, stime: number, etime: number, filter?: HostPortFilter): number;
  /** Start of the burst cube of the UTC day containing `time` (null when burstKeys is 0). */
  burstCube(pcode: number, time: number): number | null;
  /** Event history records with eventTime in [stime, etime), as seen at server time `now`. */
  events(pcode: number, stime: number, etime: number, now: number): JsonRecord[];
  agents(pcode: number): { oid: number; oname: string }[];
}

export interface SandboxProject {
  pcode: number;
  token: string;
  name: string;
}

export interface Sandbox {
  /** Base URL, e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  port: number;
  projects: SandboxProject[];
  accountToken: string;
  tokenHeader: string;
  pcodeHeader: string;
  requestLog: RequestLogEntry[];
  clearLog(): void;
  truth: GroundTruth;
  setFaults(rate: number, kinds?: FaultKind[]): void;
  /** Turns hostile modes on (or off with null) for the next requests. */
  setHostile(hostile: HostileOptions | null): void;
  /** The profile in force; `setProfile` changes it for the next requests (e.g. correct the clock). */
  readonly profile: ServerProfile;
  setProfile(profile: Partial<ServerProfile>): void;
  stop(): Promise<void>;
}
