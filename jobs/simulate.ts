// `apm-sync simulate`: runs the sandbox Open API server until SIGINT/SIGTERM and prints how to
// point the client at it. The tokens printed are the sandbox's own, made up from the seed.
import { loadConfig } from "../src/config.ts";
import {
  type FaultKind,
  type HostileOptions,
  parseFaultKinds,
  parseHostileModes,
  parseProfile,
  type SandboxOptions,
  type ServerProfile,
  startSandbox,
} from "../src/sandbox/index.ts";
import { UsageError } from "../src/usage-error.ts";

function num(value: unknown, name: string, check: (n: number) => boolean): number {
  const n = Number(value);
  if (value === undefined || value === "" || !Number.isFinite(n) || !check(n))
    throw new UsageError(`--${name}: invalid value ${JSON.stringify(value)}`);
  return n;
}

function parseLatency(value: unknown): [number, number] | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)(?:\.\.(\d+))?$/.exec(String(value));
  if (!m || Number(m[2] ?? m[1]) < Number(m[1])) throw new UsageError(`--latency-ms: expected A..B (ms), got ${JSON.stringify(value)}`);
  return [Number(m[1]), Number(m[2] ?? m[1])];
}

export function parseOptions(opts: Record<string, unknown>): SandboxOptions & { port: number; host: string } {
  let faults: FaultKind[] | undefined;
  let profile: ReturnType<typeof parseProfile>;
  try {
    profile = parseProfile(opts);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  try {
    faults = opts.faults === undefined ? undefined : parseFaultKinds(String(opts.faults));
  } catch (e) {
    throw new UsageError(`--faults: ${(e as Error).message}`);
  }
  return {
    ...(opts.hostile !== undefined && { hostile: parseHostile(opts) }),
    port: num(opts.port ?? 8181, "port", (n) => Number.isInteger(n) && n >= 0 && n < 65536),
    host: String(opts.host ?? "127.0.0.1"),
    seed: num(opts.seed ?? 1, "seed", Number.isSafeInteger),
    projects: num(opts.projects ?? 3, "projects", (n) => Number.isInteger(n) && n >= 1 && n <= 100),
    maxRecords: num(opts.maxRecords ?? 10000, "max-records", (n) => Number.isInteger(n) && n >= 1),
    latencyMs: parseLatency(opts.latencyMs),
    faultRate: num(opts.faultRate ?? 0, "fault-rate", (n) => n >= 0 && n <= 1),
    ...(faults && { faults }),
    ...(opts.rateLimit !== undefined && { rateLimitRps: num(opts.rateLimit, "rate-limit", (n) => n > 0) }),
    burstKeys: num(opts.burstKeys ?? 12000, "burst-keys", (n) => Number.isInteger(n) && n >= 0 && n <= 65536),
    profile,
    cacheReplies: opts.cacheReplies === true,
    // A server that runs for days keeps only the recent requests.
    logLimit: 10_000,
  };
}

function parseHostile(opts: Record<string, unknown>): HostileOptions {
  let modes: HostileOptions["modes"];
  try {
    modes = parseHostileModes(String(opts.hostile));
  } catch (e) {
    throw new UsageError(`--hostile: ${(e as Error).message}`);
  }
  const ops = opts.hostileOps === undefined ? undefined : String(opts.hostileOps).split(",").filter(Boolean);
  return {
    modes,
    ...(ops && { ops }),
    rate: num(opts.hostileRate ?? 1, "hostile-rate", (n) => n >= 0 && n <= 1),
    retryAfterS: num(opts.retryAfter ?? 120, "retry-after", (n) => n >= 0),
    trickleMs: num(opts.trickleMs ?? 1000, "trickle-ms", (n) => n >= 1),
  };
}

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(opts);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`apm-sync simulate: ${e.message}\n`);
    return 2;
  }
  // The same header settings as the client (env, else file, else defaults); nothing else is needed.
  const { api } = loadConfig({ configFile: typeof global.config === "string" ? global.config : undefined });
  const sandbox = await startSandbox({ ...options, tokenHeader: api.tokenHeader, pcodeHeader: api.pcodeHeader });
  const projects = sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(",");
  const out = [
    `sandbox Open API listening on ${sandbox.url} (seed ${options.seed}, record cap ${options.maxRecords})`,
    `headers: ${sandbox.tokenHeader} / ${sandbox.pcodeHeader}`,
    `profile: ${describeProfile(sandbox.profile)}`,
    ...(options.hostile
      ? [
          `hostile: ${options.hostile.modes.join(", ")} on ${options.hostile.ops?.join(", ") ?? "every request"} (rate ${options.hostile.rate})`,
        ]
      : []),
    `account token: ${sandbox.accountToken}`,
    ...sandbox.projects.map((p) => `project ${p.pcode} (${p.name}): ${p.token}`),
    "",
    "sync against it:",
    `  APM_BASE_URL=${sandbox.url} APM_ACCOUNT_TOKEN=${sandbox.accountToken} APM_PROJECTS=${projects} npm run cli -- sync`,
    "",
    "Ctrl-C stops the server.",
  ];
  // Ctrl-C is handled before the server says it is ready: a signal right after the lines ends it cleanly.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  process.stdout.write(`${out.join("\n")}\n`);
  await stopped;
  await sandbox.stop();
  const cpu = process.cpuUsage();
  process.stdout.write(`stopped (cpu ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)\n`);
  return 0;
}

function describeProfile(p: ServerProfile): string {
  const stats = p.statsAtDefaultPath ? "served" : "not-found";
  return `range/series token ${p.rangeToken}, groups path ${p.groupsPath}, event agents param ${p.eventAgentParam}, statistics ${stats}, clock offset ${p.clockOffsetMs} ms, framing ${p.framing}, connections ${p.connection}`;
}
