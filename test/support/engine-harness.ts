// Engine integration harness: the sandbox over a real socket, a fresh test database, the engine
// in-process through runJob with ONE fixed (settable) clock shared by server and engine, and the
// comparisons the engine tests need (table checksums, per-key sums vs the sandbox ground truth).
import type { DestinationStream } from "pino";
import type postgres from "postgres";
import { createApiClient } from "../../src/api/client.ts";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/driver/connect.ts";
import type { ProgressSink } from "../../src/engine/progress.ts";
import { type JobResult, runJob } from "../../src/engine/run.ts";
import type { EngineDeps, JobRequest } from "../../src/engine/types.ts";
import { type GroundTruth, type Sandbox, type ServerProfile, startSandbox } from "../../src/sandbox/index.ts";
import { createLogger } from "../../src/util/logger.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export * from "./ledger-checks.ts";
export * from "./time.ts";
export * from "./truth-compare.ts";

/** Streams whose records have a count field to compare with the ground truth per key. */
export const COUNTED_STREAMS: readonly string[] = [
  "stat.transaction",
  "stat.sql",
  "stat.httpc",
  "stat.error",
  "stat.remote",
  "range.exception",
  "range.httpc",
  "range.sql",
  "range.remote",
  "range.transaction",
];

/** Environment every engine test runs with: the default 20 rps governor is for the real service. */
export const FAST_ENV: Readonly<Record<string, string>> = {
  APM_RPS: "2000",
  APM_CONCURRENCY: "32",
  APM_WINDOW_CONCURRENCY: "8",
  APM_RETRIES: "3",
  APM_TIMEOUT: "20s",
};

export interface EngineOptions {
  /** Base URL of the API (the sandbox or a tiny test server). */
  readonly baseUrl: string;
  readonly projects: readonly { pcode: number; token: string }[];
  readonly accountToken?: string;
  readonly database: Database;
  readonly now: () => number;
  /** Extra env (APM_START, APM_LOOKBACK...), on top of FAST_ENV. */
  readonly env?: Readonly<Record<string, string>>;
  /** Receives every log line (level warn and above). */
  readonly logs?: string[];
  /** What the engine reports while it works (none by default). */
  readonly progress?: ProgressSink;
}

/** Runs one job in-process with its own API client (closed afterwards). */
export function runEngine(opts: EngineOptions, req: JobRequest): Promise<JobResult> {
  return withEngine(opts, (deps) => runJob(deps, req));
}

/** `work` with the engine's dependencies as a job of `opts` gets them (its API client closed afterwards). */
export async function withEngine<T>(opts: EngineOptions, work: (deps: EngineDeps) => Promise<T>): Promise<T> {
  const now = opts.now();
  const env: Record<string, string> = {
    ...FAST_ENV,
    APM_BASE_URL: opts.baseUrl,
    APM_PROJECTS: opts.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    DATABASE_URL: "postgres://unused.invalid/db",
    APM_DB_SCHEMA: opts.database.schema,
    APM_LOG_LEVEL: "warn",
    ...(opts.accountToken ? { APM_ACCOUNT_TOKEN: opts.accountToken } : {}),
    ...opts.env,
  };
  const config = loadConfig({ env, now });
  const lines = opts.logs ?? [];
  const destination: DestinationStream = { write: (s: string) => void lines.push(s.trimEnd()) };
  const logger = createLogger({ level: "warn", format: "plain", destination });
  const client = createApiClient(config.api, { logger, now: opts.now });
  const deps: EngineDeps = {
    config,
    client,
    database: opts.database,
    logger,
    now: opts.now,
    ...(opts.progress ? { progress: opts.progress } : {}),
  };
  try {
    return await work(deps);
  } finally {
    await client.close();
  }
}

export interface HarnessOptions {
  /** Start value of the shared clock (server and engine). */
  readonly now: number;
  readonly maxRecords?: number;
  readonly burstKeys?: number;
  /** Latency range of every sandbox answer (ms). */
  readonly latencyMs?: [number, number];
  readonly projects?: number;
  readonly seed?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** How the sandbox resolves the spec's open points (default: the strict profile). */
  readonly profile?: Partial<ServerProfile>;
}

export interface EngineHarness {
  readonly sandbox: Sandbox;
  readonly truth: GroundTruth;
  readonly db: TestDatabase;
  readonly sql: postgres.Sql;
  readonly pcodes: readonly number[];
  readonly logs: string[];
  now(): number;
  setNow(ms: number): void;
  /** runJob against the sandbox at the current clock; `env` adds to the harness env. */
  run(req: JobRequest, env?: Readonly<Record<string, string>>, progress?: ProgressSink): Promise<JobResult>;
  close(): Promise<void>;
}

export async function startEngineHarness(opts: HarnessOptions): Promise<EngineHarness> {
  let clock = opts.now;
  const now = () => clock;
  const sandbox = await startSandbox({
    now,
    seed: opts.seed ?? 1,
    projects: opts.projects ?? 2,
    ...(opts.profile ? { profile: opts.profile } : {}),
    ...(opts.maxRecords !== undefined ? { maxRecords: opts.maxRecords } : {}),
    ...(opts.burstKeys !== undefined ? { burstKeys: opts.burstKeys } : {}),
    ...(opts.latencyMs ? { latencyMs: opts.latencyMs } : {}),
  });
  const db = await createTestDatabase();
  const logs: string[] = [];
  return {
    sandbox,
    truth: sandbox.truth,
    db,
    sql: db.sql,
    pcodes: sandbox.projects.map((p) => p.pcode),
    logs,
    now,
    setNow: (ms) => {
      clock = ms;
    },
    run: (req, env, progress) =>
      runEngine(
        {
          baseUrl: sandbox.url,
          projects: sandbox.projects,
          accountToken: sandbox.accountToken,
          database: db,
          now,
          env: { ...opts.env, ...env },
          logs,
          ...(progress ? { progress } : {}),
        },
        req,
      ),
    close: async () => {
      await sandbox.stop();
      await db.drop();
    },
  };
}

/** GET a sandbox path as project `pcode` (raw JSON.parse: for values below 2^53 only). */
export async function sandboxGet(sandbox: Sandbox, pcode: number, path: string): Promise<unknown> {
  const project = sandbox.projects.find((p) => p.pcode === pcode);
  if (!project) throw new Error(`sandbox has no project ${pcode}`);
  const res = await fetch(`${sandbox.url}${path}`, {
    headers: { [sandbox.tokenHeader]: project.token, [sandbox.pcodeHeader]: String(pcode) },
  });
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return res.json();
}
