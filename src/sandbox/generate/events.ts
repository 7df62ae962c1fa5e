// Events: each hour opens 0-2 events on some agent; each resolves after minutes, hours or days
// (a few never). The state a response shows is the state at the server clock: the same uuid/id
// is "ON" with offTime 0 first, then "OFF" with offTime set once the clock passes its end.
import { DAY, HOUR, MINUTE } from "../../catalogue/types.ts";
import { hex128, intIn, pick, rngOf } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";

const METRICS = [
  { metricName: "mem", title: "Server Memory", category: "app_host_resource", threshold: 90, max: 100 },
  { metricName: "cpu", title: "Server CPU", category: "app_host_resource", threshold: 80, max: 100 },
  { metricName: "active_tx_count", title: "Active Transaction", category: "app_counter", threshold: 100, max: 400 },
  { metricName: "heap_use", title: "Heap Memory", category: "app_memory", threshold: 85, max: 100 },
  { metricName: "tx_error_rate", title: "Transaction Error Rate", category: "app_counter", threshold: 5, max: 40 },
];

export interface EventFilter {
  /** `progress=true`: only events still open. */
  readonly progress?: boolean;
  readonly oids?: ReadonlySet<number>;
  readonly okinds?: ReadonlySet<number>;
  readonly onodes?: ReadonlySet<number>;
}

function duration(r: number, rng: () => number): number {
  if (r < 0.5) return intIn(rng, 5, 60) * MINUTE;
  if (r < 0.85) return intIn(rng, 1, 12) * HOUR;
  if (r < 0.97) return intIn(rng, 24, 72) * HOUR;
  return Number.POSITIVE_INFINITY;
}

function eventsOfHour(w: ProjectWorld, hour: number, now: number): Record<string, unknown>[] {
  const rng = rngOf(w.seed, w.pcode, hour, "events");
  const n = rng() < 0.4 ? 0 : intIn(rng, 1, 2);
  return Array.from({ length: n }, (_, k) => {
    const m = pick(rng, METRICS);
    const agent = pick(rng, w.agents);
    const eventTime = hour + Math.floor(rng() * HOUR);
    const end = eventTime + duration(rng(), rng);
    const value = m.threshold + (m.max - m.threshold) * rng();
    // Every draw happens whatever the clock says: the state must not shift the next event's values.
    const openedUpdate = eventTime + intIn(rng, 20, 200);
    const resolved = end <= now;
    const uuid = hex128(w.seed, w.pcode, hour, k, "uuid");
    return eventRecord(w, { m, agent, id: (hour / HOUR) * 4 + k, uuid, eventTime, end, value, openedUpdate, resolved });
  });
}

interface EventDraw {
  readonly m: (typeof METRICS)[number];
  readonly agent: ProjectWorld["agents"][number];
  readonly id: number;
  readonly uuid: string;
  readonly eventTime: number;
  readonly end: number;
  readonly value: number;
  readonly openedUpdate: number;
  readonly resolved: boolean;
}

/** An event as the API sends it. */
function eventRecord(w: ProjectWorld, d: EventDraw): Record<string, unknown> {
  const { m, agent, id, eventTime, end, value, openedUpdate, resolved } = d;
  const level = value > (m.threshold + m.max) / 2 ? "Critical" : "Warning";
  return {
    metricName: m.metricName,
    // The API sends pcode as a string in some events and as a number in others.
    pcode: id % 5 === 0 ? String(w.pcode) : w.pcode,
    onodeName: "",
    displayTag: resolved ? "resolved" : "inprogress",
    metricValue: String(Math.round(value * 100000) / 100000),
    oid: agent.oid,
    title: m.title,
    uuid: d.uuid,
    okind: agent.okind,
    ackCount: 0,
    eventTime,
    disabled: resolved,
    id,
    acknowledges: [],
    stateful: true,
    process: 0,
    product: "ap",
    level,
    triggerId: 0,
    updateTime: resolved ? end : openedUpdate,
    message: `${m.title} = ${value.toFixed(3)}`,
    metricThreshold: String(m.threshold),
    oname: agent.oname,
    escalation: level === "Critical",
    tagCount: true,
    systemEvent: false,
    offTime: resolved ? end : 0,
    category: m.category,
    okindName: "",
    onode: agent.onode,
    snapshot: null,
    status: resolved ? "OFF" : "ON",
  };
}

/** Events with eventTime in [stime, etime) that have happened by `now`, oldest first. */
export function eventsIn(w: ProjectWorld, stime: number, etime: number, now: number, filter: EventFilter = {}): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const last = Math.min(etime, now + 1);
  for (let hour = Math.floor(stime / HOUR) * HOUR; hour < last && hour < stime + 400 * DAY; hour += HOUR) {
    for (const e of eventsOfHour(w, hour, now)) {
      const t = e.eventTime as number;
      if (t < stime || t >= etime || t > now) continue;
      if (filter.progress && e.status !== "ON") continue;
      if (filter.oids && !filter.oids.has(e.oid as number)) continue;
      if (filter.okinds && !filter.okinds.has(e.okind as number)) continue;
      if (filter.onodes && !filter.onodes.has(e.onode as number)) continue;
      out.push(e);
    }
  }
  return out.sort((a, b) => (a.eventTime as number) - (b.eventTime as number) || (a.id as number) - (b.id as number));
}
