// Project-token operations without statistics: detail, agents, agents in a window, event history.
import { type HandlerContext, HttpError, windowOf, worldOf } from "../context.ts";
import { agentsIn } from "../generate/agents.ts";
import { eventsIn } from "../generate/events.ts";
import { CUBE_MS, floorTo, javaDate } from "../grid.ts";
import { agentActive } from "../world.ts";
import { eventSettings } from "./settings.ts";

/** APM product shape: Java Date text times and a capitalised status (docs sample). */
export function projectDetail(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  return {
    platform: "JAVA",
    createTime: javaDate(w.createTime),
    gatewayName: "SANDBOX",
    projectCode: w.pcode,
    status: "Subscribe",
    lastUpdatedTime: javaDate(w.createTime + 7000),
    name: w.name,
    productType: "APM",
  };
}

/** Basic agent list: no oid (docs: use the agent list of a window for oids). */
export function agents(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const cube = floorTo(ctx.now, CUBE_MS) - CUBE_MS;
  return { data: w.agents.map((a) => ({ host_ip: a.ip, oname: a.oname, active: agentActive(w, a, cube) })) };
}

export function settings(ctx: HandlerContext): unknown {
  return eventSettings(worldOf(ctx));
}

export function agentsWindow(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const data = agentsIn(w, win.cubes).map(({ agent, active }) => ({
    oid: agent.oid,
    oname: agent.oname,
    alias: "",
    initial: "",
    otype: "java",
    // A string in the docs sample.
    subtype: "0",
    active,
    okind: agent.okind,
    okindName: agent.okind ? "was" : "",
    onode: agent.onode,
    onodeName: "",
    ip: agent.ip,
    "agent.version": "2.2.30",
    cpuCores: 4,
  }));
  return { stime: win.stime, etime: win.etime, timestamp: ctx.now, data };
}

function intSet(value: string | null): Set<number> | undefined {
  if (value === null || value === "") return undefined;
  const items = value.split(",").map((s) => Number(s.trim()));
  if (items.some((n) => !Number.isInteger(n))) throw new HttpError(400, "[F] invalid number list");
  return new Set(items);
}

/** A bare array (no envelope); `[]` when nothing happened. */
export function eventHistory(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const q = ctx.query;
  // The spec names `oid` in the parameter table and `oids` in the sample: a server reads one of
  // them and ignores the other (profile.eventAgentParam).
  const oids = intSet(q.get(ctx.profile.eventAgentParam));
  const okinds = intSet(q.get("okinds"));
  const onodes = intSet(q.get("onodes"));
  return eventsIn(w, win.stime, win.etime, ctx.now, {
    progress: q.get("progress") === "true",
    ...(oids && { oids }),
    ...(okinds && { okinds }),
    ...(onodes && { onodes }),
  });
}
