// Every setting once, by its file key, with the zod type of its value. The config file is this
// shape (plus `projects`); environment variables map onto the same keys (env-source.ts), so a
// value means the same wherever it comes from.
import { z } from "zod";
import { DAY, MINUTE } from "../catalogue/types.ts";
import { DB_CONNECTIONS_DEFAULT, DB_CONNECTIONS_MIN } from "../db/driver/connection-budget.ts";
import { describeIssues, formatPath } from "./config-error.ts";
import type { ProjectToken } from "./credentials.ts";
import { cron } from "./cron.ts";
import { retention } from "./retention.ts";
import { overridableProblem, streamInputs, streamNameProblem, windowedStreamProblem } from "./stream-names.ts";
import { strictObject } from "./strict.ts";
import { didYouMean } from "./suggest.ts";
import { duration, LONG_MAX, SECOND, startTime, TIMER_MAX } from "./time-values.ts";
import {
  headerName,
  httpUrl,
  LOG_FORMATS,
  LOG_LEVELS,
  listenAddress,
  nonEmpty,
  numberIn,
  oneOf,
  postgresUrl,
  sqlIdentifier,
} from "./values.ts";

/** A record key checked by `problem` (null: fine). */
function keyChecked(problem: (key: string) => string | null) {
  return z.string().check((ctx) => {
    const message = problem(ctx.value);
    if (message) ctx.issues.push({ code: "custom", input: ctx.value, message });
  });
}

/** A comma list (as in APM_STREAMS) or a JSON list of stream ids and prefixes. */
const streamList = z.union([z.string(), z.array(z.string())]).transform((v, ctx) => {
  const names = (typeof v === "string" ? v.split(",") : v).map((s) => s.trim()).filter(Boolean);
  for (const name of names) {
    const problem = streamNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }
  return names;
});

const override = strictObject({ method: oneOf(["GET", "POST"]).optional(), path: z.string().startsWith("/").optional() });

// A JSON number beyond 2^53 - 1 has lost digits before any check sees it (an agent id of 64 bits
// would be sent rounded, to another agent): refused, not rounded.
const exactNumber = z.number().refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), {
  error: (iss) =>
    `a number beyond 2^53 - 1 (read as ${String(iss.input)}): JSON numbers that large lose their last digits, and it would be sent as another value; no agent id (32-bit), port or filter value is that large: check it`,
});
const inputValue = z.union([z.string(), exactNumber, z.array(exactNumber)]);

/** `inputs`: per stream that needs them, a list of entries holding exactly its input names. */
const inputs = z.record(z.string(), z.array(z.record(z.string(), inputValue))).superRefine((byStream, ctx) => {
  for (const [id, entries] of Object.entries(byStream)) {
    const needed = streamInputs(id);
    if ("problem" in needed) {
      ctx.addIssue({ code: "custom", path: [id], message: needed.problem });
      continue;
    }
    entries.forEach((entry, i) => {
      for (const key of Object.keys(entry).filter((k) => !needed.names.includes(k)))
        ctx.addIssue({ code: "custom", path: [id, i], message: `unknown input ${JSON.stringify(key)}${didYouMean(key, needed.names)}` });
      const missing = needed.names.filter((n) => entry[n] === undefined || entry[n] === "");
      if (missing.length > 0) ctx.addIssue({ code: "custom", path: [id, i], message: `missing ${missing.join(", ")}` });
    });
  }
});

/** Window sizes: whole 5-minute steps, at most the longest limit of an operation (365 days). */
const grain = duration({ min: 5 * MINUTE, max: 365 * DAY, grid: true });

/**
 * The settings every source may set, by file key (env-source.ts maps variables onto them). Every
 * duration has its bounds here: timers (TIMER_MAX) within Node's timer range, lookbacks and the
 * settle within about ten years (LONG_MAX).
 */
export function settingsShape(now: number) {
  return {
    databaseUrl: postgresUrl,
    dataDir: nonEmpty,
    dataDirWait: duration({ min: 0, max: TIMER_MAX }),
    diskFloor: numberIn(0, 2 ** 53),
    dbSchema: sqlIdentifier,
    dbConnections: numberIn(DB_CONNECTIONS_MIN, DB_CONNECTIONS_DEFAULT),
    baseUrl: httpUrl,
    tokenHeader: headerName,
    pcodeHeader: headerName,
    timeout: duration({ min: SECOND, max: TIMER_MAX }),
    maxResponseBytes: numberIn(1024, 2 ** 31),
    maxRecordBytes: numberIn(1024, 2 ** 31),
    memoryBudget: numberIn(2 ** 20, 2 ** 34),
    retries: numberIn(0, 20),
    concurrency: numberIn(1, 64),
    requestsPerSecond: numberIn(0.1, 10_000, false),
    overrides: z.record(keyChecked(overridableProblem), override),
    streams: streamList,
    start: startTime(now),
    grain,
    grains: z.record(keyChecked(windowedStreamProblem), grain),
    inputs,
    retention,
    archive: nonEmpty,
    lookback: duration({ min: 0, max: LONG_MAX }),
    eventLookback: duration({ min: 0, max: LONG_MAX }),
    openEventLookback: duration({ min: 0, max: LONG_MAX }),
    settle: duration({ min: 0, max: LONG_MAX }),
    windowConcurrency: numberIn(1, 32),
    dbRetry: duration({ min: 0, max: TIMER_MAX }),
    shutdownGrace: duration({ min: 0, max: TIMER_MAX }),
    refreshAlong: duration({ min: 0, max: TIMER_MAX }),
    workerRecovery: duration({ min: SECOND, max: TIMER_MAX }),
    schedule: cron,
    logLevel: oneOf(LOG_LEVELS),
    logFormat: oneOf(LOG_FORMATS),
    metricsPort: numberIn(0, 65535),
    metricsHost: listenAddress,
    pushgatewayUrl: httpUrl,
  };
}

export type SettingsShape = ReturnType<typeof settingsShape>;
export type SettingKey = keyof SettingsShape;
/** Parsed values of the settings, each optional (a source sets some of them). */
export type Settings = { -readonly [K in SettingKey]?: z.output<SettingsShape[K]> };

/** What one source contributes: its values and its problems (each naming the setting there). */
export interface SourceValues {
  readonly values: Settings & { projects?: ProjectToken[]; accountToken?: string };
  readonly problems: readonly string[];
}

/**
 * Parses each key of `raw` with its own type from `shape`, so that one bad value hides no other
 * problem and does not make a good one look unset. `nameOf` names a key in its source.
 */
export function parseSettings(
  raw: Readonly<Record<string, unknown>>,
  shape: Readonly<Record<string, z.ZodType>>,
  nameOf: (key: string) => string,
): SourceValues {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const type = shape[key];
    if (value === undefined || !type) continue;
    const parsed = type.safeParse(value);
    if (parsed.success) values[key] = parsed.data;
    else problems.push(...describeIssues(parsed.error.issues, (path) => `${nameOf(key)}${path.length > 0 ? pathSuffix(path) : ""}`));
  }
  return { values, problems };
}

function pathSuffix(path: readonly PropertyKey[]): string {
  const text = formatPath(path);
  return text.startsWith("[") ? text : `.${text}`;
}
