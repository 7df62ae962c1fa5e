// The merged settings (flags over environment over file) and the defaults, as one Config; plus
// the checks that span sources: an API to talk to and a token to talk with.
import { DAY, HOUR, MINUTE } from "../catalogue/types.ts";
import { DB_CONNECTIONS_DEFAULT } from "../db/driver/connection-budget.ts";
import { DEFAULT_DISK_FLOOR } from "../db/driver/embedded-disk.ts";
import { DEFAULT_WAIT_MS } from "../db/driver/embedded-lock.ts";
import { Secret } from "../util/secret.ts";
import type { SourceValues } from "./settings.ts";
import { tracingOf } from "./tracing.ts";
import type { Config } from "./types.ts";
import { urlProblem } from "./values.ts";

type Merged = SourceValues["values"];

/**
 * Windows of one stream in flight. The windows a stream fetched while its previous write was under
 * way are written in one transaction (engine/group-commit.ts), so more in flight means fewer
 * transactions: at 16 against 4, a backfill from a server without a rate limit took about a tenth
 * less time and its Postgres backends a tenth less CPU; peak RSS rose by 10-30 MiB and stayed
 * under 256 MiB into Postgres (the answers in flight are bounded by APM_MEMORY_BUDGET, not by
 * their number; docs/benchmarks.md).
 */
const DEFAULT_WINDOW_CONCURRENCY = 16;

/** Key by key, the first source that sets it wins. */
export function mergeSources(sources: readonly SourceValues[]): { merged: Merged; problems: string[] } {
  const merged: Merged = {};
  for (const source of [...sources].reverse()) Object.assign(merged, source.values);
  return { merged, problems: sources.flatMap((s) => s.problems) };
}

/**
 * Commands that send requests need an address and a token: with neither a project nor an account
 * token there is nothing to do, and a run that did nothing must not look like a success.
 */
export function apiProblems(m: Merged): string[] {
  const problems: string[] = [];
  if (!m.baseUrl) problems.push("APM_BASE_URL is not set (the Open API base address, e.g. https://api.example.com; file key baseUrl)");
  if ((m.projects?.length ?? 0) === 0 && !m.accountToken)
    problems.push(
      "no token is configured, so there is nothing to do: set APM_PROJECTS=pcode:token,... (project data; file key projects) " +
        "and/or APM_ACCOUNT_TOKEN (the account's projects, groups and members); each also as *_FILE",
    );
  return problems;
}

export function buildConfig(m: Merged, env: NodeJS.ProcessEnv, now: number): Config {
  return {
    databaseUrl: m.databaseUrl ?? null,
    dataDir: m.dataDir ?? ".apm-sync",
    dataDirWaitMs: m.dataDirWait ?? DEFAULT_WAIT_MS,
    diskFloorBytes: m.diskFloor ?? DEFAULT_DISK_FLOOR,
    dbSchema: m.dbSchema ?? "apm",
    dbConnections: m.dbConnections ?? DB_CONNECTIONS_DEFAULT,
    api: {
      baseUrl: m.baseUrl ?? "",
      accountToken: m.accountToken ? new Secret(m.accountToken) : null,
      projects: (m.projects ?? []).map((p) => ({ pcode: p.pcode, token: new Secret(p.token) })),
      tokenHeader: m.tokenHeader ?? "x-service-token",
      pcodeHeader: m.pcodeHeader ?? "x-service-pcode",
      timeoutMs: m.timeout ?? 30_000,
      maxResponseBytes: m.maxResponseBytes ?? 64 * 1024 * 1024,
      maxRecordBytes: m.maxRecordBytes ?? 8 * 1024 * 1024,
      memoryBudget: m.memoryBudget ?? 8 * 1024 * 1024,
      retries: m.retries ?? 5,
      concurrency: m.concurrency ?? 8,
      requestsPerSecond: m.requestsPerSecond ?? 20,
      overrides: m.overrides ?? {},
      proxy: proxyOf(env),
    },
    sync: {
      streams: m.streams && m.streams.length > 0 ? m.streams : null,
      startMs: m.start ?? now - 7 * DAY,
      grainMs: m.grain ?? HOUR,
      grainOverridesMs: m.grains ?? {},
      inputs: m.inputs ?? {},
      lookbackMs: m.lookback ?? HOUR,
      eventLookbackMs: m.eventLookback ?? DAY,
      openEventLookbackMs: m.openEventLookback ?? 7 * DAY,
      settleMs: m.settle ?? 10 * MINUTE,
      windowConcurrency: m.windowConcurrency ?? DEFAULT_WINDOW_CONCURRENCY,
      dbRetryMs: m.dbRetry ?? 60_000,
      shutdownGraceMs: m.shutdownGrace ?? 10_000,
      refreshAlongMs: m.refreshAlong ?? 1_000,
    },
    retention: m.retention ?? {},
    archive: m.archive ?? null,
    queue: { recoveryMs: m.workerRecovery ?? 5 * MINUTE, schedule: m.schedule ?? null },
    log: { level: m.logLevel ?? "info", format: m.logFormat ?? "pretty" },
    metrics: { port: m.metricsPort ?? null, host: m.metricsHost ?? "127.0.0.1", pushgatewayUrl: m.pushgatewayUrl ?? null },
    tracing: tracingOf(env).tracing,
  };
}

/** The variable of a proxy that is used (curl's rule: lower case wins), and its value ("": unset). */
function proxyVar(env: NodeJS.ProcessEnv, name: string): { name: string; value: string } {
  const lower = name.toLowerCase();
  return env[lower] ? { name: lower, value: env[lower] } : { name, value: env[name] || "" };
}

/** The proxy URLs parsed as undici's proxy agent will, each named; never echoed (a proxy URL may hold a password). */
export function proxyProblems(env: NodeJS.ProcessEnv): string[] {
  return ["HTTP_PROXY", "HTTPS_PROXY"].flatMap((variable) => {
    const { name, value } = proxyVar(env, variable);
    const problem = value ? urlProblem(value, ["http:", "https:", "socks:", "socks5:"]) : null;
    return problem ? [`${name}: ${problem}`] : [];
  });
}

/** The usual proxy variables (HTTPS_PROXY for https URLs, else HTTP_PROXY). */
function proxyOf(env: NodeJS.ProcessEnv): Config["api"]["proxy"] {
  const pick = (name: string) => proxyVar(env, name).value;
  const httpProxy = pick("HTTP_PROXY");
  const httpsProxy = pick("HTTPS_PROXY") || httpProxy;
  if (!httpProxy && !httpsProxy) return null;
  return { httpProxy, httpsProxy, noProxy: pick("NO_PROXY") };
}
