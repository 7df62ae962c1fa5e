// The sandbox: a deterministic Open API server with ground truth and fault injection, for tests,
// the demo, benchmarks and BI people without tokens. `apm-sync simulate` runs it from the CLI.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ServerState } from "./context.ts";
import { FactCache } from "./generate/facts.ts";
import { MAX_BURST_KEYS } from "./names.ts";
import { DEFAULT_PROFILE } from "./profile.ts";
import { SandboxServer } from "./server.ts";
import { makeTruth } from "./truth.ts";
import { FAULT_KINDS, type FaultKind, type Sandbox, type SandboxOptions } from "./types.ts";
import { accountTokenOf, buildWorld, pcodeAt, projectToken } from "./world.ts";

export { parseFaultKinds } from "./faults.ts";
export { HOSTILE_MODES, type HostileMode, type HostileOptions, parseHostileModes } from "./hostile.ts";
export { REDIRECT_ORIGIN } from "./hostile-send.ts";
export { COUNT_FIELD, NATURAL_KEYS, naturalKey } from "./keys.ts";
export { DEFAULT_PROFILE, parseProfile, type ServerProfile } from "./profile.ts";
export * from "./types.ts";

type StartOptions = SandboxOptions & { port?: number; host?: string };

export async function startSandbox(opts: StartOptions = {}): Promise<Sandbox> {
  const { state, accountToken } = serverState(opts);
  const tokenHeader = (opts.tokenHeader ?? "x-service-token").toLowerCase();
  const pcodeHeader = (opts.pcodeHeader ?? "x-service-pcode").toLowerCase();
  const sandbox = new SandboxServer({
    state,
    auth: { tokenHeader, pcodeHeader, accountToken, worlds: state.worlds },
    now: opts.now ?? Date.now,
    profile: { ...DEFAULT_PROFILE, ...opts.profile },
    latencyMs: opts.latencyMs,
    rateLimitRps: opts.rateLimitRps,
    stallMs: opts.stallMs ?? 30_000,
    logLimit: opts.logLimit ?? Number.POSITIVE_INFINITY,
    cacheReplies: opts.cacheReplies ?? false,
    faultRate: opts.faultRate ?? 0,
    faultKinds: opts.faults ?? FAULT_KINDS,
    hostile: opts.hostile ?? null,
  });
  const server = createServer((req, res) => {
    void sandbox.handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    port,
    projects: state.worlds.map((w) => ({ pcode: w.pcode, token: w.token, name: w.name })),
    accountToken,
    tokenHeader,
    pcodeHeader,
    ...controls(sandbox, server, state),
  };
}

/** The worlds of the seed's projects and the facts' cache; the account token. */
function serverState(opts: StartOptions): { state: ServerState; accountToken: string } {
  const seed = opts.seed ?? 1;
  const burstKeys = opts.burstKeys ?? 12_000;
  if (!Number.isInteger(burstKeys) || burstKeys < 0 || burstKeys > MAX_BURST_KEYS)
    throw new Error(`burstKeys must be 0..${MAX_BURST_KEYS}`);
  const count = opts.projects ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error("projects must be a positive integer");
  const worlds = Array.from({ length: count }, (_, i) => {
    const pcode = pcodeAt(i);
    return buildWorld(seed, i, burstKeys, opts.projectTokens?.[pcode] ?? projectToken(seed, pcode));
  });
  const state: ServerState = {
    seed,
    worlds,
    cache: new FactCache(opts.cacheFacts),
    maxRecords: opts.maxRecords ?? 10_000,
    accountEmail: "owner@sandbox.example",
  };
  return { state, accountToken: opts.accountToken ?? accountTokenOf(seed) };
}

/** What a test changes on a running sandbox, what it reads back, and its stop. */
function controls(
  sandbox: SandboxServer,
  server: Server,
  state: ServerState,
): Omit<Sandbox, "url" | "port" | "projects" | "accountToken" | "tokenHeader" | "pcodeHeader"> {
  return {
    requestLog: sandbox.log,
    clearLog: () => {
      sandbox.log.length = 0;
    },
    truth: makeTruth(state),
    get profile() {
      return sandbox.settings.profile;
    },
    setProfile: (profile) => sandbox.setProfile({ ...sandbox.settings.profile, ...profile }),
    setHostile: (hostile) => {
      sandbox.settings.hostile = hostile;
    },
    setFaults: (rate: number, kinds?: FaultKind[]) => {
      sandbox.settings.faultRate = rate;
      if (kinds) sandbox.settings.faultKinds = kinds;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        sandbox.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

export { type CallOptions, type CallResult, callSandbox, requestPath } from "./call.ts";
