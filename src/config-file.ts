// The config file's shape (JSON, `--config FILE` or APM_CONFIG) and the duration syntax shared
// with the environment variables. Read by src/config.ts, the only reader of env and file.
import { z } from "zod";
import { DAY, HOUR, MINUTE } from "./catalogue/types.ts";

const DURATION = /^(\d+)\s*(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: MINUTE, h: HOUR, d: DAY };

/** Parses `90s`, `10m`, `1h`, `7d` or a bare number of ms. */
export function parseDuration(value: string | number): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value : null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const m = DURATION.exec(trimmed);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : null;
}

const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: "custom", message: `not a duration: ${JSON.stringify(v)} (use e.g. 500ms, 30s, 10m, 1h, 7d)` });
    return z.NEVER;
  }
  return ms;
});

export const fileSchema = z
  .object({
    databaseUrl: z.string().optional(),
    dataDir: z.string().optional(),
    dbSchema: z.string().optional(),
    baseUrl: z.string().optional(),
    tokenHeader: z.string().optional(),
    pcodeHeader: z.string().optional(),
    projects: z
      .array(z.object({ pcode: z.union([z.number(), z.string()]), token: z.string().optional(), tokenFile: z.string().optional() }))
      .optional(),
    timeout: duration.optional(),
    maxResponseBytes: z.number().int().positive().optional(),
    retries: z.number().int().min(0).max(20).optional(),
    concurrency: z.number().int().min(1).max(64).optional(),
    requestsPerSecond: z.number().positive().optional(),
    overrides: z
      .record(z.string(), z.object({ method: z.enum(["GET", "POST"]).optional(), path: z.string().startsWith("/").optional() }))
      .optional(),
    streams: z.array(z.string()).optional(),
    start: z.string().optional(),
    grain: duration.optional(),
    grains: z.record(z.string(), duration).optional(),
    inputs: z.record(z.string(), z.array(z.record(z.string(), z.union([z.string(), z.number(), z.array(z.number())])))).optional(),
    lookback: duration.optional(),
    eventLookback: duration.optional(),
    openEventLookback: duration.optional(),
    settle: duration.optional(),
    windowConcurrency: z.number().int().min(1).max(32).optional(),
    dbRetry: duration.optional(),
    shutdownGrace: duration.optional(),
    workerRecovery: duration.optional(),
    schedule: z.string().optional(),
    logLevel: z.string().optional(),
  })
  .strict();

export type ConfigFile = z.input<typeof fileSchema>;
/** The parsed file: durations in ms. */
export type ParsedConfigFile = z.output<typeof fileSchema>;
