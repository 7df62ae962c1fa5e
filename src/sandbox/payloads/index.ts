// Operation id -> payload handler. Ids come from the catalogue; no path is written here.
import type { ScalarMetric } from "../../catalogue/project.ts";
import { type HandlerContext, json, type Reply } from "../context.ts";
import { type HostileMode, hostileJson } from "../hostile.ts";
import { groupMembers, groupProjects, groups, projectMembers, projects } from "./account.ts";
import { heap, range, stat } from "./aggregates.ts";
import { scalar, spot } from "./current.ts";
import { agents, agentsWindow, eventHistory, projectDetail, settings } from "./project.ts";
import { calls, series, visitors } from "./series.ts";

type Handler = (ctx: HandlerContext) => unknown;

const BY_ID: Readonly<Record<string, Handler>> = {
  "account.projects": projects,
  "account.project_members": projectMembers,
  "account.groups": groups,
  "account.group_members": groupMembers,
  "account.group_projects": groupProjects,
  "project.detail": projectDetail,
  "project.agents": agents,
  "project.event_settings": settings,
  "project.spot": spot,
  "project.agents_window": agentsWindow,
  "project.event_history": eventHistory,
};

const BY_AREA: Readonly<Partial<Record<HandlerContext["op"]["area"], Handler>>> = {
  series,
  visitors,
  calls,
  stats: stat,
};

/** Picks the handler of an operation (its answer told with the lies of `hostile`); null for one the sandbox does not serve. */
export function handlerFor(ctx: HandlerContext, hostile: readonly HostileMode[] = []): (() => Reply) | null {
  const { op } = ctx;
  if (op.area === "scalar") return () => scalar(ctx, op.id.slice("scalar.".length) as ScalarMetric);
  const handler = BY_ID[op.id] ?? (op.id.startsWith("range.heap_use.") ? heap : op.area === "range" ? range : BY_AREA[op.area]);
  if (!handler) return null;
  return hostile.length > 0 ? () => hostileJson(handler(ctx), hostile, op) : () => json(handler(ctx));
}
