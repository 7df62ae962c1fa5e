// The only reader of process.env and of the config file. Everything below receives a frozen Config.
import { readFileSync } from "node:fs";
import { DAY, HOUR, MINUTE } from "./catalogue/types.ts";
import { type ConfigFile, fileSchema, type ParsedConfigFile, parseDuration } from "./config-file.ts";
import { Secret } from "./util/secret.ts";
import { parseUtcTime } from "./util/time.ts";

/** A configuration problem; `problems` lists every one found, not just the first. */
export class ConfigError extends Error {
  readonly exitCode = 2;
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface ProjectCredential {
  readonly pcode: number;
  readonly token: Secret;
}

export interface OperationOverride {
  readonly method?: "GET" | "POST";
  readonly path?: string;
}

export interface Config {
  readonly databaseUrl: string | null;
  /** Directory of the embedded database when databaseUrl is null. */
  readonly dataDir: string;
  readonly dbSchema: string;
  readonly api: {
    readonly baseUrl: string;
    readonly accountToken: Secret | null;
    readonly projects: readonly ProjectCredential[];
    readonly tokenHeader: string;
    readonly pcodeHeader: string;
    readonly timeoutMs: number;
    readonly maxResponseBytes: number;
    readonly retries: number;
    readonly concurrency: number;
    readonly requestsPerSecond: number;
    /** Method/path overrides by operation id (only for operations marked overridable). */
    readonly overrides: Readonly<Record<string, OperationOverride>>;
    /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case); null when no proxy is set. Never logged. */
    readonly proxy: { readonly httpProxy: string; readonly httpsProxy: string; readonly noProxy: string } | null;
  };
  readonly sync: {
    /** Stream (operation) ids to sync; null = every stream enabled by default. */
    readonly streams: readonly string[] | null;
    /** First-run start, epoch ms. */
    readonly startMs: number;
    readonly grainMs: number;
    readonly grainOverridesMs: Readonly<Record<string, number>>;
    /**
     * Request inputs of the streams that need them (host/port filters, filter key/value, agent
     * lists), by stream id: one partition per entry.
     */
    readonly inputs: Readonly<Record<string, readonly Readonly<Record<string, string | number | readonly number[]>>[]>>;
    readonly lookbackMs: number;
    readonly eventLookbackMs: number;
    readonly openEventLookbackMs: number;
    readonly settleMs: number;
    /** Windows fetched at once per stream. */
    readonly windowConcurrency: number;
    /** How long a window's transaction is retried while the database is away (APM_DB_RETRY). */
    readonly dbRetryMs: number;
    /** On SIGTERM/SIGINT: how long windows in flight may take to finish (APM_SHUTDOWN_GRACE). */
    readonly shutdownGraceMs: number;
  };
  /** Scale-out (`worker`, `enqueue`): the job queue in the warehouse Postgres. */
  readonly queue: {
    /** A job whose worker stopped answering runs again after this long (APM_WORKER_RECOVERY). */
    readonly recoveryMs: number;
    /** Cron expression of the scheduled sync run by the workers (APM_SCHEDULE); null: none. */
    readonly schedule: string | null;
  };
  readonly log: { readonly level: string; readonly format: "pretty" | "json" | "plain" };
  /** `worker` serves /metrics and /healthz on `port` (APM_METRICS_PORT); one-shot runs push to `pushgatewayUrl` (APM_PUSHGATEWAY_URL). */
  readonly metrics: { readonly port: number | null; readonly pushgatewayUrl: string | null };
}

export { type ConfigFile, parseDuration } from "./config-file.ts";

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** --config FILE; APM_CONFIG otherwise. */
  configFile?: string;
  /** Clock for relative `start` values (e.g. `7d`). */
  now?: number;
  /** Overrides from CLI flags, applied last. */
  overrides?: Partial<ConfigFile>;
  logFormat?: "pretty" | "json" | "plain";
  /** false for commands that send no request (migrate, status, simulate): APM_BASE_URL may be unset. */
  requireBaseUrl?: boolean;
}

/** Reads env + optional file once, validates, and reports every problem at once. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now();
  const problems: string[] = [];

  const readSecretFile = (path: string, what: string): string | undefined => {
    try {
      return readFileSync(path, "utf8").trim();
    } catch (e) {
      problems.push(`${what}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
      return undefined;
    }
  };

  let file: ParsedConfigFile = {};
  const configPath = opts.configFile ?? env.APM_CONFIG;
  if (configPath) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(configPath, "utf8"));
    } catch (e) {
      problems.push(`config file ${configPath}: ${(e as Error).message}`);
    }
    if (raw !== undefined) {
      const parsed = fileSchema.safeParse(raw);
      if (parsed.success) file = parsed.data;
      else
        for (const issue of parsed.error.issues)
          problems.push(`config file ${configPath}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
    }
  }
  const cli = opts.overrides ? fileSchema.partial().safeParse(opts.overrides) : undefined;
  if (cli && !cli.success) for (const issue of cli.error.issues) problems.push(`option ${issue.path.join(".")}: ${issue.message}`);
  const merged = { ...file, ...(cli?.success ? stripUndefined(cli.data) : {}) };

  const envDuration = (name: string, fallback: number | undefined, dflt: number): number => {
    const v = env[name];
    if (v === undefined || v === "") return fallback ?? dflt;
    const ms = parseDuration(v);
    if (ms === null) problems.push(`${name}: not a duration: ${JSON.stringify(v)}`);
    return ms ?? dflt;
  };
  const envInt = (name: string, fallback: number | undefined, dflt: number, min: number, max: number): number => {
    const v = env[name];
    if (v === undefined || v === "") return fallback ?? dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max)
      problems.push(`${name}: expected a number between ${min} and ${max}, got ${JSON.stringify(v)}`);
    return Number.isFinite(n) ? n : dflt;
  };

  // Secrets: VAR or VAR_FILE (for Docker/Kubernetes secrets), never both.
  const secretVar = (name: string): string | undefined => {
    const direct = env[name];
    const path = env[`${name}_FILE`];
    if (direct && path) problems.push(`${name} and ${name}_FILE are both set; use one`);
    if (path) return readSecretFile(path, `${name}_FILE`);
    return direct || undefined;
  };

  const accountToken = secretVar("APM_ACCOUNT_TOKEN");
  const projects = parseProjects(secretVar("APM_PROJECTS"), merged.projects, problems, readSecretFile);

  const baseUrl = env.APM_BASE_URL ?? merged.baseUrl ?? "";
  if (!baseUrl && opts.requireBaseUrl !== false)
    problems.push("APM_BASE_URL is not set (the Open API base address, e.g. https://api.example.com)");
  else if (baseUrl && !/^https?:\/\/[^/]+/.test(baseUrl)) problems.push(`APM_BASE_URL: not an http(s) URL: ${JSON.stringify(baseUrl)}`);

  const dbSchema = env.APM_DB_SCHEMA ?? merged.dbSchema ?? "apm";
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(dbSchema))
    problems.push(`APM_DB_SCHEMA: must be a lower-case SQL identifier, got ${JSON.stringify(dbSchema)}`);

  const databaseUrl = env.DATABASE_URL || merged.databaseUrl || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push("DATABASE_URL: must start with postgres:// or postgresql://");

  const startText = env.APM_START ?? merged.start ?? "7d";
  const startMs = parseStart(startText, now);
  if (startMs === null) problems.push(`APM_START: expected an ISO date/time or a duration ago like 7d, got ${JSON.stringify(startText)}`);

  const logFormat = opts.logFormat ?? (env.APM_LOG_FORMAT as Config["log"]["format"] | undefined) ?? "pretty";
  if (!["pretty", "json", "plain"].includes(logFormat))
    problems.push(`APM_LOG_FORMAT: one of pretty, json, plain; got ${JSON.stringify(logFormat)}`);

  const grainMs = envDuration("APM_GRAIN", merged.grain, HOUR);
  if (grainMs % (5 * MINUTE) !== 0 || grainMs === 0) problems.push("grain must be a positive multiple of 5 minutes");

  const config: Config = {
    databaseUrl,
    dataDir: env.APM_DATA_DIR ?? merged.dataDir ?? ".apm-sync",
    dbSchema,
    api: {
      baseUrl: baseUrl.replace(/\/+$/, ""),
      accountToken: accountToken ? new Secret(accountToken) : null,
      projects,
      tokenHeader: (env.APM_TOKEN_HEADER ?? merged.tokenHeader ?? "x-service-token").toLowerCase(),
      pcodeHeader: (env.APM_PCODE_HEADER ?? merged.pcodeHeader ?? "x-service-pcode").toLowerCase(),
      timeoutMs: envDuration("APM_TIMEOUT", merged.timeout, 30_000),
      maxResponseBytes: envInt("APM_MAX_RESPONSE_BYTES", merged.maxResponseBytes, 64 * 1024 * 1024, 1024, 2 ** 31),
      retries: envInt("APM_RETRIES", merged.retries, 5, 0, 20),
      concurrency: envInt("APM_CONCURRENCY", merged.concurrency, 8, 1, 64),
      requestsPerSecond: envInt("APM_RPS", merged.requestsPerSecond, 20, 0.1, 10_000),
      overrides: merged.overrides ?? {},
      proxy: proxyOf(env),
    },
    sync: {
      streams: env.APM_STREAMS
        ? env.APM_STREAMS.split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : (merged.streams ?? null),
      startMs: startMs ?? 0,
      grainMs,
      grainOverridesMs: merged.grains ?? {},
      inputs: merged.inputs ?? {},
      lookbackMs: envDuration("APM_LOOKBACK", merged.lookback, HOUR),
      eventLookbackMs: envDuration("APM_EVENT_LOOKBACK", merged.eventLookback, DAY),
      openEventLookbackMs: envDuration("APM_OPEN_EVENT_LOOKBACK", merged.openEventLookback, 7 * DAY),
      settleMs: envDuration("APM_SETTLE", merged.settle, 10 * MINUTE),
      windowConcurrency: envInt("APM_WINDOW_CONCURRENCY", merged.windowConcurrency, 4, 1, 32),
      dbRetryMs: envDuration("APM_DB_RETRY", merged.dbRetry, 60_000),
      shutdownGraceMs: envDuration("APM_SHUTDOWN_GRACE", merged.shutdownGrace, 10_000),
    },
    queue: {
      recoveryMs: envDuration("APM_WORKER_RECOVERY", merged.workerRecovery, 5 * MINUTE),
      schedule: cronOf(env.APM_SCHEDULE ?? merged.schedule, problems),
    },
    log: { level: env.APM_LOG_LEVEL ?? merged.logLevel ?? "info", format: logFormat },
    metrics: {
      port: env.APM_METRICS_PORT ? envInt("APM_METRICS_PORT", undefined, 0, 0, 65535) : null,
      pushgatewayUrl: env.APM_PUSHGATEWAY_URL || null,
    },
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/** Five cron fields (minute hour day-of-month month day-of-week), as graphile-worker reads them. */
function cronOf(value: string | undefined, problems: string[]): string | null {
  const text = value?.trim();
  if (!text) return null;
  const field = /^(\*|\d+(-\d+)?)(\/\d+)?(,(\*|\d+(-\d+)?)(\/\d+)?)*$/;
  const fields = text.split(/\s+/);
  if (fields.length !== 5 || !fields.every((f) => field.test(f)))
    problems.push(`APM_SCHEDULE: expected a cron expression of five fields, e.g. "*/10 * * * *", got ${JSON.stringify(text)}`);
  return text;
}

/** `APM_PROJECTS=pcode:token,pcode:token` (env wins) or the file's `projects` list. */
function parseProjects(
  envValue: string | undefined,
  fromFile: readonly { pcode: number | string; token?: string | undefined; tokenFile?: string | undefined }[] | undefined,
  problems: string[],
  readSecretFile: (path: string, what: string) => string | undefined,
): ProjectCredential[] {
  const out: ProjectCredential[] = [];
  const add = (pcodeText: string, token: string | undefined, where: string) => {
    const pcode = Number(pcodeText);
    if (!/^\d+$/.test(pcodeText.trim()) || !Number.isSafeInteger(pcode) || pcode <= 0) {
      problems.push(`${where}: project code must be a positive integer, got ${JSON.stringify(pcodeText)}`);
      return;
    }
    if (!token) {
      problems.push(`${where}: project ${pcode} has no token`);
      return;
    }
    if (out.some((p) => p.pcode === pcode)) problems.push(`${where}: project ${pcode} is listed twice`);
    out.push({ pcode, token: new Secret(token) });
  };
  if (envValue !== undefined) {
    envValue
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .forEach((entry, i) => {
        const idx = entry.indexOf(":");
        // Never echo the entry: it holds a token.
        if (idx <= 0) problems.push(`APM_PROJECTS: entry ${i + 1} is not pcode:token`);
        else add(entry.slice(0, idx), entry.slice(idx + 1), "APM_PROJECTS");
      });
  } else {
    for (const p of fromFile ?? []) {
      const token = p.tokenFile ? readSecretFile(p.tokenFile, `projects[${p.pcode}].tokenFile`) : p.token;
      add(String(p.pcode), token, "config file projects");
    }
  }
  return out;
}

/** The usual proxy variables (curl's rules: lower case wins; HTTPS_PROXY for https URLs). */
function proxyOf(env: NodeJS.ProcessEnv): Config["api"]["proxy"] {
  const pick = (name: string) => env[name.toLowerCase()] || env[name] || "";
  const httpProxy = pick("HTTP_PROXY");
  const httpsProxy = pick("HTTPS_PROXY") || httpProxy;
  if (!httpProxy && !httpsProxy) return null;
  return { httpProxy, httpsProxy, noProxy: pick("NO_PROXY") };
}

function parseStart(text: string, now: number): number | null {
  const ago = parseDuration(text);
  if (ago !== null && !/^\d+$/.test(text.trim())) return now - ago;
  return parseUtcTime(text);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !(o instanceof Secret)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
