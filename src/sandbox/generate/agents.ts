// Agents over time: which are up, their heap use per cube, and the thread metric series.
import type { MetricType } from "../../catalogue/series.ts";
import { CUBE_MS } from "../grid.ts";
import { rngOf } from "../rng.ts";
import { type Agent, activity, agentActive, type ProjectWorld } from "../world.ts";

export const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Agents up in at least one of `cubes`; `active` = up in the last one. */
export function agentsIn(w: ProjectWorld, cubes: readonly number[]): { agent: Agent; active: boolean }[] {
  const last = cubes[cubes.length - 1];
  return w.agents.flatMap((agent) =>
    cubes.some((c) => agentActive(w, agent, c)) ? [{ agent, active: last !== undefined && agentActive(w, agent, last) }] : [],
  );
}

/** Heap in use (bytes, fractional like the docs' "36121554.72") of one agent in one cube. */
export function heapAt(w: ProjectWorld, agent: Agent, cube: number): number {
  const rng = rngOf(w.seed, w.pcode, agent.oid, cube, "heap");
  return round3(agent.heapBase * (0.45 + 0.3 * activity(w, cube) + 0.25 * rng()));
}

/** heap_use per agent over the cubes, avg or max, as the decimal strings the API sends. */
export function heapUse(w: ProjectWorld, cubes: readonly number[], merge: "avg" | "max") {
  return w.agents.flatMap((agent) => {
    const values = cubes.filter((c) => agentActive(w, agent, c)).map((c) => heapAt(w, agent, c));
    if (values.length === 0) return [];
    const v = merge === "max" ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;
    return [{ oid: agent.oid, oname: agent.oname, heap_use: String(round3(v)) }];
  });
}

/** One series point of `metric` for an agent in a cube. */
export function metricAt(w: ProjectWorld, metric: MetricType, agent: Agent, cube: number): number {
  const rng = rngOf(w.seed, w.pcode, agent.oid, cube, metric);
  const act = activity(w, cube);
  const threads = Math.round(80 + 160 * act + 20 * rng());
  switch (metric) {
    case "thread_count":
      return threads;
    case "thread_daemon":
      return Math.round(threads * 0.6);
    case "thread_peak_count":
      return threads + Math.round(10 + 30 * rng());
    case "threadpool_active":
      return Math.round(60 * act * rng());
    case "threadpool_queue":
      return rng() < 0.8 ? 0 : Math.round(20 * rng());
    case "apdex":
      return Math.round((0.7 + 0.3 * rng()) * 100) / 100;
    case "tx_caller":
      return Math.round(2000 * act * rng());
  }
}

/** Per-agent series over the cubes ([cube start, value] pairs, only cubes the agent was up). */
export function seriesByAgent(w: ProjectWorld, metric: MetricType, cubes: readonly number[], oids: ReadonlySet<number> | null) {
  return w.agents
    .filter((a) => !oids || oids.has(a.oid))
    .map((agent) => ({
      oname: agent.oname,
      oid: agent.oid,
      series: cubes.filter((c) => agentActive(w, agent, c)).map((c) => [c, metricAt(w, metric, agent, c)] as [number, number]),
    }))
    .filter((o) => o.series.length > 0);
}

/** Averaged series: the mean over the agents up in each cube (objectMerge avg). */
export function seriesAveraged(w: ProjectWorld, metric: MetricType, cubes: readonly number[], oids: ReadonlySet<number> | null) {
  const agents = w.agents.filter((a) => !oids || oids.has(a.oid));
  return cubes.flatMap((c) => {
    const values = agents.filter((a) => agentActive(w, a, c)).map((a) => metricAt(w, metric, a, c));
    return values.length === 0
      ? []
      : [[c, Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 100) / 100] as [number, number]];
  });
}

/** Interval of the series points, in seconds (docs: 300). */
export const SERIES_INTERVAL_S = CUBE_MS / 1000;
