// The only reader of process.env and of the config file. Three sources, each parsed by zod with
// its own names (CLI flags, environment variables, the JSON file), merged key by key in that
// order of precedence into one frozen Config; every problem is reported at once (exit 2).
import { z } from "zod";
import { apiProblems, buildConfig, mergeSources, proxyProblems } from "./config/build.ts";
import { ConfigError, describeIssues } from "./config/config-error.ts";
import { readEnv } from "./config/env-source.ts";
import { readConfigFile } from "./config/file-source.ts";
import type { SourceValues } from "./config/settings.ts";
import { tracingOf } from "./config/tracing.ts";
import type { Config, LogFormat } from "./config/types.ts";
import { LOG_FORMATS, oneOf } from "./config/values.ts";
import { Secret } from "./util/secret.ts";

export { ConfigError } from "./config/config-error.ts";
export { LONG_MAX, readDuration, readTime } from "./config/time-values.ts";
export type { Config, InputEntry, LogFormat, OperationOverride, ProjectCredential } from "./config/types.ts";

/** Global CLI flags that are settings (the others are arguments of their command). */
const flagsSchema = z.object({ logFormat: oneOf(LOG_FORMATS).optional() });
const FLAG_NAMES: Record<string, string> = { logFormat: "--log-format" };

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** --config FILE; APM_CONFIG otherwise. */
  configFile?: string;
  /** Clock for relative times (`start: 7d`). */
  now?: number;
  /** Global CLI flags; they win over the environment and the file. */
  flags?: { readonly logFormat?: unknown };
  /** sync, backfill, check, enqueue, worker: an API address and at least one token are required. */
  requireApi?: boolean;
}

/** Reads flags, env and the optional file once, validates, and reports every problem at once. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now();
  const configPath = opts.configFile ?? (env.APM_CONFIG || undefined);
  const sources = [readFlags(opts.flags ?? {}), readEnv(env, now), ...(configPath ? [readConfigFile(configPath, now)] : [])];
  const { merged, problems } = mergeSources(sources);
  if (opts.requireApi) problems.push(...apiProblems(merged));
  problems.push(...tracingOf(env).problems, ...proxyProblems(env));
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(buildConfig(merged, env, now));
}

/**
 * The log format asked for by the flag or APM_LOG_FORMAT, for reporting a problem found before
 * (or while) the configuration is read: a scheduler that asked for JSON gets JSON.
 */
export function requestedLogFormat(flag: unknown, env: NodeJS.ProcessEnv = process.env): LogFormat {
  return flag === "json" || (flag === undefined && env.APM_LOG_FORMAT === "json") ? "json" : "plain";
}

function readFlags(flags: { readonly logFormat?: unknown }): SourceValues {
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const parsed = flagsSchema.safeParse(defined);
  if (!parsed.success) return { values: {}, problems: describeIssues(parsed.error.issues, (p) => FLAG_NAMES[String(p[0])] ?? "") };
  return { values: Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)), problems: [] };
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !(o instanceof Secret)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
