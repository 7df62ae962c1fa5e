// The environment: each variable maps onto a setting of settings.ts and is parsed by the same zod
// type as the file's key. An APM_* variable apm-sync does not know is a problem (a typo would
// otherwise be ignored silently), with the closest known name.
import { parseProjectList, secretVar, tokenProblem } from "./credentials.ts";
import { parseSettings, type SettingKey, type SourceValues, settingsShape } from "./settings.ts";
import { didYouMean } from "./suggest.ts";

/** Variable -> setting. */
const ENV_SETTINGS = {
  APM_BASE_URL: "baseUrl",
  APM_TOKEN_HEADER: "tokenHeader",
  APM_PCODE_HEADER: "pcodeHeader",
  DATABASE_URL: "databaseUrl",
  APM_DATA_DIR: "dataDir",
  APM_DATA_DIR_WAIT: "dataDirWait",
  APM_DISK_FLOOR: "diskFloor",
  APM_DB_SCHEMA: "dbSchema",
  APM_DB_CONNECTIONS: "dbConnections",
  APM_STREAMS: "streams",
  APM_START: "start",
  APM_RETENTION: "retention",
  APM_ARCHIVE: "archive",
  APM_GRAIN: "grain",
  APM_LOOKBACK: "lookback",
  APM_EVENT_LOOKBACK: "eventLookback",
  APM_OPEN_EVENT_LOOKBACK: "openEventLookback",
  APM_SETTLE: "settle",
  APM_CONCURRENCY: "concurrency",
  APM_RPS: "requestsPerSecond",
  APM_WINDOW_CONCURRENCY: "windowConcurrency",
  APM_DB_RETRY: "dbRetry",
  APM_SHUTDOWN_GRACE: "shutdownGrace",
  APM_REFRESH_ALONG: "refreshAlong",
  APM_WORKER_RECOVERY: "workerRecovery",
  APM_SCHEDULE: "schedule",
  APM_RETRIES: "retries",
  APM_TIMEOUT: "timeout",
  APM_MAX_RESPONSE_BYTES: "maxResponseBytes",
  APM_MAX_RECORD_BYTES: "maxRecordBytes",
  APM_MEMORY_BUDGET: "memoryBudget",
  APM_LOG_LEVEL: "logLevel",
  APM_LOG_FORMAT: "logFormat",
  APM_METRICS_PORT: "metricsPort",
  APM_METRICS_HOST: "metricsHost",
  APM_PUSHGATEWAY_URL: "pushgatewayUrl",
} as const satisfies Record<string, SettingKey>;

/** Variables read outside the settings table: secrets (and their `_FILE` forms) and the file's path. */
const OTHER_VARS = ["APM_ACCOUNT_TOKEN", "APM_ACCOUNT_TOKEN_FILE", "APM_PROJECTS", "APM_PROJECTS_FILE", "APM_CONFIG"];

/** Every variable apm-sync reads with the APM_ prefix. */
const KNOWN_VARS: readonly string[] = [...Object.keys(ENV_SETTINGS), ...OTHER_VARS].filter((v) => v.startsWith("APM_"));

const VAR_OF = new Map<string, string>(Object.entries(ENV_SETTINGS).map(([name, key]) => [key, name]));

export function readEnv(env: NodeJS.ProcessEnv, now: number): SourceValues {
  const unknown = Object.keys(env).filter((k) => k.startsWith("APM_") && !KNOWN_VARS.includes(k));
  const problems = unknown.map((name) => `${name} is not a setting of apm-sync${didYouMean(name, KNOWN_VARS)}`);
  // An empty variable counts as unset (`APM_START= cmd` in a shell).
  const raw = Object.fromEntries(Object.entries(ENV_SETTINGS).map(([name, key]) => [key, env[name] === "" ? undefined : env[name]]));
  const parsed = parseSettings(raw, settingsShape(now), (key) => VAR_OF.get(key) ?? key);
  const values: SourceValues["values"] = { ...parsed.values };
  problems.push(...parsed.problems);

  const accountToken = secretVar(env, "APM_ACCOUNT_TOKEN", problems);
  const accountProblem = accountToken ? tokenProblem(accountToken) : null;
  if (accountProblem)
    problems.push(`${env.APM_ACCOUNT_TOKEN_FILE ? "APM_ACCOUNT_TOKEN_FILE" : "APM_ACCOUNT_TOKEN"}: the account token ${accountProblem}`);
  else if (accountToken) values.accountToken = accountToken;
  const projectText = secretVar(env, "APM_PROJECTS", problems);
  if (projectText !== undefined) {
    const name = env.APM_PROJECTS_FILE ? "APM_PROJECTS_FILE" : "APM_PROJECTS";
    values.projects = parseProjectList(projectText, name, problems);
  }
  return { values, problems };
}
