// `apm-sync check`: one probe per selected operation and project against the configured server,
// a few at a time through the one client (its rate governor applies), nothing written anywhere.
// The selection is sync's; windowed operations ask for the most recent complete 5-minute window
// on the server's own clock, so a server whose clock lags is never asked for its future.
import pLimit from "p-limit";
import type { ApiClient } from "../api/types.ts";
import { perProject } from "../catalogue/account.ts";
import { operation } from "../catalogue/index.ts";
import { isAccountStream, type OperationDef } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { accountTarget, askableKeys } from "../engine/fan-out.ts";
import { projectTargets, selectOperations, selectProjects } from "../engine/targets.ts";
import type { Target } from "../engine/types.ts";
import { alignDown, GRID_MS } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
import { baseUrlAdvice, blameBaseUrl, unreachableAdvice } from "./advice.ts";
import { type Probed, type ProbeResult, probeTarget, skipped } from "./probe.ts";

export interface CheckDeps {
  readonly config: Config;
  readonly client: ApiClient;
  readonly now: () => number;
}

export interface CheckSelection {
  readonly streams: readonly string[] | null;
  readonly projects: readonly number[] | null;
}

export interface CheckReport {
  /** Every probe `ok` or `skipped`. */
  readonly ok: boolean;
  /** Server clock minus ours (ms); null when no answer carried a clock. */
  readonly serverClockOffsetMs: number | null;
  /** Header names in use (names only, never values). */
  readonly headers: { readonly token: string; readonly pcode: string };
  /** The window the windowed operations were asked for. */
  readonly window: Span;
  readonly operations: readonly ProbeResult[];
  /** What to fix where every probe failed for one reason in the configuration (said once). */
  readonly advice: readonly string[];
}

/** Probes at once: enough to be quick, far below the ~20 parallel calls a real server answers 429 to. */
const PROBES_AT_ONCE = 4;

export async function runCheck(deps: CheckDeps, selection: CheckSelection): Promise<CheckReport> {
  const { config, client } = deps;
  const ops = selectOperations(selection.streams ?? config.sync.streams, config.sync.inputs);
  const projects = selectProjects(config, selection.projects);
  const offset = await client.probeClock();
  const window = probeWindow(deps.now() + (offset ?? 0), config.sync.settleMs);
  const prober = new Prober(deps, window);
  const accountOps = ops.filter(isAccountStream);
  const projectOps = ops.filter((op) => !isAccountStream(op));
  const account = accountOps.map((op) => accountProbe(deps, op, prober));
  const projectProbes = projects.flatMap((pcode) =>
    projectOps.map((op) => {
      // Operations with inputs: the first configured entry stands for the others.
      const target = projectTargets(op, pcode, config.sync.inputs)[0];
      return target ? prober.probe(target).then((p) => p.result) : Promise.resolve(skipped(op, pcode, "no inputs configured"));
    }),
  );
  let operations = [...(await Promise.all(account)), ...(await Promise.all(projectProbes))];
  // Only without --projects: a narrowed run says nothing about the projects left out on purpose.
  if (accountOps.some((o) => o.id === perProject.stream) && config.api.accountToken && !selection.projects)
    operations.push(...unconfigured(config, projectOps, await prober.list(perProject.stream)));
  const baseUrl = baseUrlAdvice(config.api.baseUrl, ops, operations);
  if (baseUrl) operations = blameBaseUrl(operations);
  const unreachable = prober.unreachable === "connect" ? unreachableAdvice(config.api.baseUrl) : null;
  return {
    ok: operations.every((r) => r.status === "ok" || r.status === "skipped"),
    serverClockOffsetMs: client.serverClockOffsetMs(),
    headers: { token: config.api.tokenHeader, pcode: config.api.pcodeHeader },
    window,
    operations,
    advice: [unreachable, baseUrl].filter((a) => a !== null),
  };
}

/** Runs probes a few at a time; remembers the account lists the fan-out operations need. */
class Prober {
  readonly #limit = pLimit(PROBES_AT_ONCE);
  readonly #lists = new Map<string, Promise<Probed>>();
  #unreachable: Probed | null = null;

  constructor(
    private readonly deps: CheckDeps,
    private readonly window: Span,
  ) {}

  /** How the server could not be reached, once a probe found it could not. */
  get unreachable(): Probed["unreachable"] {
    return this.#unreachable?.unreachable ?? null;
  }

  probe(target: Target): Promise<Probed> {
    return this.#limit(async () => {
      const first = this.#unreachable;
      // A server nobody can connect to fails every probe alike: say so at once instead of
      // spending the retries and backoff of each.
      if (first) {
        const message = `not sent: ${first.result.id} could not reach the server: ${first.result.message}`;
        const result = skipped(target.op, target.op.sendsPcode ? target.pcode : null, message, "error");
        return { result, rows: [], unreachable: first.unreachable };
      }
      const probed = await probeTarget(this.deps.client, target, this.window, this.deps.now());
      if (probed.unreachable) this.#unreachable ??= probed;
      return probed;
    });
  }

  /** The probe of an account list, sent once (also when only a fan-out operation of it is selected). */
  list(id: string): Promise<Probed> {
    let p = this.#lists.get(id);
    if (!p) {
      p = this.probe(accountTarget(operation(id)));
      this.#lists.set(id, p);
    }
    return p;
  }
}

/** The most recent complete 5-minute window that a sync would also consider settled. */
export function probeWindow(serverNow: number, settleMs: number): Span {
  const end = alignDown(Math.floor(serverNow - settleMs), GRID_MS);
  return { start: end - GRID_MS, end };
}

async function accountProbe(deps: CheckDeps, op: OperationDef, prober: Prober): Promise<ProbeResult> {
  if (!deps.config.api.accountToken) return skipped(op, null, "no account token (APM_ACCOUNT_TOKEN)");
  const parent = op.stream?.parent;
  if (!parent) return (await prober.list(op.id)).result;
  // A child stream is probed with the first key of its parent's list that can be asked for.
  const list = await prober.list(parent.stream);
  if (list.result.status !== "ok") return skipped(op, null, `needs a key from ${parent.stream}, which failed`);
  const listed = list.rows.map((r) => String(r[parent.key]));
  const key = askableKeys(parent, listed).keys[0];
  if (key === undefined) {
    const why = listed.length > 0 ? `every key ${parent.stream} lists is ${parent.skip?.why ?? "left out"}` : `${parent.stream} lists none`;
    return skipped(op, null, `no key to probe: ${why}`);
  }
  return (await prober.probe(accountTarget(op, key))).result;
}

/** Projects the account lists but APM_PROJECTS has no token for: their operations are skipped. */
function unconfigured(config: Config, projectOps: readonly OperationDef[], list: Probed): ProbeResult[] {
  if (list.result.status !== "ok") return [];
  const configured = new Set(config.api.projects.map((p) => p.pcode));
  const listed = [...new Set(list.rows.map((r) => Number(r[perProject.key])))].filter((p) => Number.isFinite(p) && !configured.has(p));
  return listed.flatMap((pcode) => projectOps.map((op) => skipped(op, pcode, `no token for project ${pcode} in APM_PROJECTS`)));
}
