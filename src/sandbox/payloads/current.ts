// Current values (spot and the 11 scalar operations), all from the last complete cube.
import type { ScalarMetric } from "../../catalogue/project.ts";
import type { ServerState } from "../context.ts";
import { type HandlerContext, type Reply, text, worldOf } from "../context.ts";
import { metricAt } from "../generate/agents.ts";
import { visitorsAt } from "../generate/visitors.ts";
import { CUBE_MS, floorTo } from "../grid.ts";
import { mix } from "../rng.ts";
import { agentActive, type ProjectWorld } from "../world.ts";

type Current = Record<ScalarMetric | "threadpool_active" | "threadpool_queue" | "dbconn_total" | "dbconn_act" | "dbconn_idle", number> &
  Record<"act_method" | "act_sql" | "act_httpc" | "act_dbc" | "act_socket", number>;

function current(state: ServerState, w: ProjectWorld, now: number): Current {
  const cube = floorTo(now, CUBE_MS) - CUBE_MS;
  const up = w.agents.filter((a) => agentActive(w, a, cube));
  let count = 0;
  let timeSum = 0;
  let satisfied = 0;
  let tolerated = 0;
  for (const f of state.cache.facts("transaction", w, cube)) {
    count += f.count!;
    timeSum += f.timeSum!;
    satisfied += f.apdexSatisfied!;
    tolerated += f.apdexTolerated!;
  }
  const r = (what: string, n: number) => mix(w.seed, w.pcode, cube, what) % n;
  const tps = Math.round((count / 300) * 100) / 100;
  const rtime = count ? Math.round(timeSum / count) : 0;
  const sumOf = (metric: "threadpool_active" | "threadpool_queue") => up.reduce((s, a) => s + metricAt(w, metric, a, cube), 0);
  const dbconnTotal = up.length * 100;
  const dbconnAct = Math.min(dbconnTotal, r("dbc", 40) * up.length);
  const hosts = new Set(w.agents.map((a) => a.ip)).size;
  return {
    act_agent: up.length,
    inact_agent: w.agents.length - up.length,
    host: hosts,
    cpucore: hosts * 4,
    txcount: count,
    tps,
    user: visitorsAt(w, cube),
    actx: Math.round((tps * rtime) / 1000),
    rtime,
    cpu: (500 + r("cpu", 6000)) / 100,
    threadpool_active: sumOf("threadpool_active"),
    threadpool_queue: sumOf("threadpool_queue"),
    dbconn_total: dbconnTotal,
    dbconn_act: dbconnAct,
    dbconn_idle: dbconnTotal - dbconnAct,
    act_method: r("method", 60),
    act_sql: r("sql", 30),
    act_httpc: r("httpc", 60),
    act_dbc: r("adbc", 12),
    act_socket: r("socket", 3),
    apdex: count ? Math.round(((satisfied + tolerated / 2) / count) * 10000) / 10000 : 1,
  };
}

const FLOAT_SCALARS = new Set(["tps", "cpu", "apdex"]);

/**
 * Bare text/plain number. The third project answers its fractional scalars as a quoted string
 * ("66.0" style), a form the docs show for the raw tag operations.
 */
export function scalar(ctx: HandlerContext, metric: ScalarMetric): Reply {
  const w = worldOf(ctx);
  const value = current(ctx.state, w, ctx.now)[metric];
  if (w.index === 2 && FLOAT_SCALARS.has(metric)) return text(JSON.stringify(value.toFixed(1)));
  return text(String(value));
}

/** Every value a string (docs sample); connection counts as "600.0". */
export function spot(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const c = current(ctx.state, w, ctx.now);
  const out: Record<string, unknown> = { pcode: w.pcode };
  for (const [k, v] of Object.entries(c)) out[k] = k.startsWith("dbconn_") ? v.toFixed(1) : String(v);
  return out;
}
