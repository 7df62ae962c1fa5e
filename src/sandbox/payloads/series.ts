// Metric series, visitors and the filtered cross-project call statistics.
import { BASE64_FILTER_KEYS } from "../../catalogue/calls.ts";
import type { MetricType } from "../../catalogue/series.ts";
import { type HandlerContext, HttpError, windowOf, worldOf } from "../context.ts";
import { SERIES_INTERVAL_S, seriesAveraged, seriesByAgent } from "../generate/agents.ts";
import { bucketsIn, monthlyActiveUsers, visitorsAt, visitorsDay, visitorsHour } from "../generate/visitors.ts";
import { javaDate, monthStart } from "../grid.ts";
import { mix } from "../rng.ts";
import { svcOf } from "./names.ts";

function oidList(text: string | undefined): Set<number> | null {
  if (text === undefined) return null;
  const oids = text.split(",").map((s) => Number(s.trim()));
  if (oids.length === 0 || oids.some((n) => !Number.isInteger(n)))
    throw new HttpError(400, "[F] oids must be integers separated by commas");
  return new Set(oids);
}

/** Per-agent (`objects`) or averaged (`series`) form, all agents or the listed ones. */
export function series(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const metric = ctx.op.id.split(".")[1] as MetricType;
  const oids = oidList(ctx.params.oids);
  const head = { pcode: w.pcode, type: metric, stime: win.stime, etime: win.etime, interval: SERIES_INTERVAL_S, timeMerge: "sum" };
  if (ctx.op.id.includes(".avg")) return { ...head, objectMerge: "avg", series: seriesAveraged(w, metric, win.cubes, oids) };
  return { ...head, objects: seriesByAgent(w, metric, win.cubes, oids) };
}

export function visitors(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const unit = ctx.op.id.split(".")[1];
  if (unit === "m") {
    const data = bucketsIn(win.stime, win.etime, "m").map((m) => ({
      stime: m,
      etime: monthStart(m, 1),
      sdate: javaDate(m),
      edate: javaDate(monthStart(m, 1)),
      mau: monthlyActiveUsers(w, m),
    }));
    const range = { sdate: javaDate(win.stime), edate: javaDate(win.etime) };
    return { data, pcode: w.pcode, stime: win.stime, etime: win.etime, ...range, total: data.length };
  }
  const data: [number, number][] =
    unit === "5m"
      ? win.cubes.map((c) => [c, visitorsAt(w, c)])
      : unit === "h"
        ? bucketsIn(win.stime, win.etime, "h").map((h) => [h, visitorsHour(w, h)])
        : bucketsIn(win.stime, win.etime, "d").map((d) => [d, visitorsDay(w, d)]);
  // `total`: visitors over the range; for the hourly result the number of points (spec).
  const total = unit === "h" ? data.length : data.reduce((s, [, n]) => s + n, 0);
  return { data, pcode: w.pcode, stime: win.stime, etime: win.etime, total };
}

/**
 * tx_caller / tx_domain filtered by filterkey/filterval. The response shape is undocumented; the
 * sandbox answers a plausible envelope: {pcode, type, stime, etime, filterkey, filterval, data:
 * [{caller_pcode, caller_spec, caller_url, spec, url, count, error, time_sum, time_avg}]}, with
 * filterval base64-decoded for caller_url and url, and only rows whose field equals it.
 */
export function calls(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const { filterkey = "", filterval = "" } = ctx.params;
  if (!["caller_pcode", "caller_spec", "caller_url", "spec", "url"].includes(filterkey)) throw new HttpError(400, "[F] unknown filterkey");
  const value = BASE64_FILTER_KEYS.has(filterkey) ? Buffer.from(filterval, "base64").toString("utf8") : filterval;
  const callers = ctx.state.worlds.filter((c) => c.pcode !== w.pcode);
  const rows = (callers.length > 0 ? callers : [w]).flatMap((caller) =>
    [0, 1, 2].map((i) => {
      const count = win.cubes.reduce((s, c) => s + (mix(w.seed, w.pcode, caller.pcode, i, c) % 50), 0);
      const timeSum = count * (100 + (mix(caller.pcode, i) % 900));
      return {
        caller_pcode: caller.pcode,
        caller_spec: "1.0",
        caller_url: svcOf(caller.services[i]!).name,
        spec: "1.0",
        url: svcOf(w.services[i]!).name,
        count,
        error: Math.floor(count / 97),
        time_sum: timeSum,
        time_avg: count ? Math.round(timeSum / count) : 0,
      };
    }),
  );
  const data = rows.filter((r) => String(r[filterkey as keyof typeof r]) === value);
  return { pcode: w.pcode, type: ctx.op.id.split(".")[1], stime: win.stime, etime: win.etime, filterkey, filterval: value, data };
}
