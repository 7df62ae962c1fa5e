// Aggregated statistics (v2 envelope), v1 range records and heap use.
import { fullRecords, type HostFilter, isSortColumn } from "../aggregate.ts";
import { type HandlerContext, HttpError, windowOf, worldOf } from "../context.ts";
import { heapUse } from "../generate/agents.ts";

function statFilter(ctx: HandlerContext): HostFilter | undefined {
  const filter = ctx.body.filter;
  // Only httpc supports a filter (spec); other types ignore it.
  if (ctx.op.id !== "stat.httpc" || filter === undefined || filter === null) return undefined;
  const f = filter as Record<string, unknown>;
  if (typeof f !== "object" || f.host === undefined || f.port === undefined)
    throw new HttpError(400, "[F] filter must contain both host and port");
  return { host: String(f.host), port: String(f.port) };
}

/** v2: {stime, etime, timestamp, data, total, retrievedTotal}; capped at maxRecords (spec rule 3). */
export function stat(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const order = ctx.body.order;
  if (order !== undefined && (typeof order !== "string" || !isSortColumn(w, ctx.op.id, order)))
    throw new HttpError(400, `[F] unknown order column ${JSON.stringify(order)}`);
  const all = fullRecords(ctx.state.cache, w, ctx.op.id, win.cubes, statFilter(ctx), order);
  const data = all.slice(0, ctx.state.maxRecords);
  return { stime: win.stime, etime: win.etime, timestamp: ctx.now, data, total: all.length, retrievedTotal: data.length };
}

/** v1: {records, total}; `total` counts all matching records, `records` is capped. */
export function range(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const filter = ctx.op.id === "range.httpc.filtered" ? { host: ctx.params.host ?? "", port: ctx.params.port ?? "" } : undefined;
  const all = fullRecords(ctx.state.cache, w, ctx.op.id, win.cubes, filter);
  return { records: all.slice(0, ctx.state.maxRecords), total: all.length };
}

/** heap_use as decimal strings; etime echoed as clamped (docs sample echoes an unaligned etime). */
export function heap(ctx: HandlerContext): unknown {
  const w = worldOf(ctx);
  const win = windowOf(ctx);
  const merge = ctx.op.id.endsWith(".max") ? "max" : "avg";
  return { pcode: w.pcode, stime: win.stime, etime: win.etime, timeMerge: merge, unit: "byte", data: heapUse(w, win.cubes, merge) };
}
