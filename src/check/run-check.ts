// `apm-sync check`: one probe per selected operation and project against the configured server,
// a few at a time through the one client (its rate governor applies), nothing written anywhere.
// The selection is sync's; windowed operations ask for the most recent complete 5-minute window
// on the server's own clock, so a server whose clock lags is never asked for its future.
import pLimit from "p-limit";
import type { ApiClient } from "../api/client.ts";
import { operation } from "../catalogue/index.ts";
import type { OperationDef } from "../catalogue/types.ts";
import type { Config } from "../config.ts";
import { accountTarget, isAccountOperation, projectTargets, selectOperations, selectProjects } from "../engine/targets.ts";
import type { Target } from "../engine/types.ts";
import { alignDown, GRID_MS } from "../windows/grid.ts";
import type { Span } from "../windows/intervals.ts";
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
}

/** Probes at once: enough to be quick, far below the ~20 parallel calls a real server answers 429 to. */
const PROBES_AT_ONCE = 4;

// The list each fan-out operation takes its one probed partition from.
const LIST_OF = { project: "account.projects", group: "account.groups" } as const;

export async function runCheck(deps: CheckDeps, selection: CheckSelection): Promise<CheckReport> {
  const { config, client } = deps;
  const ops = selectOperations(selection.streams ?? config.sync.streams, config.sync.inputs);
  const projects = selectProjects(config, selection.projects);
  const offset = await client.probeClock();
  const window = probeWindow(deps.now() + (offset ?? 0), config.sync.settleMs);
  const limit = pLimit(PROBES_AT_ONCE);
  const probe = (target: Target) => limit(() => probeTarget(client, target, window, deps.now()));

  const lists = new Map<string, Promise<Probed>>();
  const listProbe = (id: string) => {
    let p = lists.get(id);
    if (!p) {
      // A fan-out operation selected without its list: the list is asked for, but not reported.
      p = probe(accountTarget(operation(id)));
      lists.set(id, p);
    }
    return p;
  };
  const accountOps = ops.filter(isAccountOperation);
  const projectOps = ops.filter((op) => !isAccountOperation(op));
  const account = accountOps.map((op) => accountProbe(deps, op, listProbe, probe));
  const perProject = projects.flatMap((pcode) =>
    projectOps.map((op) => {
      // Operations with inputs: the first configured entry stands for the others.
      const target = projectTargets(op, pcode, config.sync.inputs)[0];
      return target ? probe(target).then((p) => p.result) : Promise.resolve(skipped(op, pcode, "no inputs configured"));
    }),
  );
  const operations = [...(await Promise.all(account)), ...(await Promise.all(perProject))];
  const projectList = ops.some((o) => o.id === LIST_OF.project) ? lists.get(LIST_OF.project) : undefined;
  // Only without --projects: a narrowed run says nothing about the projects left out on purpose.
  if (projectList && !selection.projects) operations.push(...unconfigured(config, projectOps, await projectList));
  return {
    ok: operations.every((r) => r.status === "ok" || r.status === "skipped"),
    serverClockOffsetMs: client.serverClockOffsetMs(),
    headers: { token: config.api.tokenHeader, pcode: config.api.pcodeHeader },
    window,
    operations,
  };
}

/** The most recent complete 5-minute window that a sync would also consider settled. */
export function probeWindow(serverNow: number, settleMs: number): Span {
  const end = alignDown(Math.floor(serverNow - settleMs), GRID_MS);
  return { start: end - GRID_MS, end };
}

async function accountProbe(
  deps: CheckDeps,
  op: OperationDef,
  listProbe: (id: string) => Promise<Probed>,
  probe: (target: Target) => Promise<Probed>,
): Promise<ProbeResult> {
  if (!deps.config.api.accountToken) return skipped(op, null, "no account token (APM_ACCOUNT_TOKEN)");
  const kind = op.stream?.fanOut;
  if (!kind) return (await listProbe(op.id)).result;
  const list = await listProbe(LIST_OF[kind]);
  if (list.result.status !== "ok") return skipped(op, null, `needs a ${kind} from ${LIST_OF[kind]}, which failed`);
  const keys = list.rows.map((r) => String(kind === "project" ? r.pcode : r.group_key));
  // The group list masks some keys ("grp****ab12"): a masked key cannot be asked for.
  const key = keys.find((k) => !k.includes("*"));
  if (key === undefined) {
    const why = keys.length > 0 ? `the server masks every key ${LIST_OF[kind]} lists` : `${LIST_OF[kind]} lists none`;
    return skipped(op, null, `no ${kind} to probe: ${why}`);
  }
  return (await probe(accountTarget(op, key))).result;
}

/** Projects the account lists but APM_PROJECTS has no token for: their operations are skipped. */
function unconfigured(config: Config, projectOps: readonly OperationDef[], list: Probed): ProbeResult[] {
  if (list.result.status !== "ok") return [];
  const configured = new Set(config.api.projects.map((p) => p.pcode));
  const listed = [...new Set(list.rows.map((r) => Number(r.pcode)))].filter((p) => Number.isFinite(p) && !configured.has(p));
  return listed.flatMap((pcode) => projectOps.map((op) => skipped(op, pcode, `no token for project ${pcode} in APM_PROJECTS`)));
}
