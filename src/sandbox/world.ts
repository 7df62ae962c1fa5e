// One project's fixed universe (derived from seed + pcode): services, SQL, outbound calls,
// exceptions, client IPs and agents. Cubes pick random subsets of it, so windows of different
// length have different distinct-key counts.
import { DAY, HOUR } from "../catalogue/types.ts";
import { CUBE_MS, dayStart } from "./grid.ts";
import { DATABASES, EXCEPTION_COUNT, HOSTS, MESSAGE_COUNT, REMOTE_URL_COUNT, SERVICE_COUNT, SQL_COUNT } from "./names.ts";
import { fmix32, intIn, mix, type Rng, rngOf, sampleIndices, signed32 } from "./rng.ts";

export interface Agent {
  readonly oid: number;
  readonly oname: string;
  readonly ip: string;
  readonly okind: number;
  readonly onode: number;
  readonly heapBase: number;
  /** Flapping agents are missing in some hours (agent list, heap, series). */
  readonly flapping: boolean;
}

export interface ProjectWorld {
  readonly seed: number;
  readonly pcode: number;
  readonly index: number;
  readonly name: string;
  readonly token: string;
  readonly createTime: number;
  readonly burstKeys: number;
  /** Global service indices, most popular first. */
  readonly services: readonly number[];
  /** Base response time (ms) per service rank. */
  readonly latency: readonly number[];
  readonly sqlKeys: readonly { sql: number; dbc: number; svc: number }[];
  readonly httpcKeys: readonly { url: number; host: number; svc: number }[];
  readonly errorKeys: readonly { cls: number; msg: number; svc: number }[];
  readonly ips: readonly string[];
  readonly agents: readonly Agent[];
}

const NAMES = ["shop-front", "bank-core", "board-api", "erp-batch", "media-cdn", "pay-gateway", "crm-web", "hr-portal"];

/** Project codes: the second is beyond 2^31 so that bigint pcode handling is exercised. */
export function pcodeAt(i: number): number {
  if (i === 1) return 3_000_000_001;
  return 1001 + (i === 0 ? 0 : i - 1);
}

export function projectToken(seed: number, pcode: number): string {
  return `sbx-p${pcode}-${mix(seed, pcode, "token").toString(36)}${mix(seed, pcode, "token2").toString(36)}`;
}

export function accountTokenOf(seed: number): string {
  return `sbx-acct-${mix(seed, "account").toString(36)}${mix(seed, "account2").toString(36)}`;
}

/** Rank popularity in (0, 1]: a long tail, so rare keys show up only in long windows. */
export function popularity(rank: number): number {
  return POPULARITY[rank] ?? 1 / (1 + rank / 40) ** 0.7;
}
const POPULARITY = Array.from({ length: 1024 }, (_, rank) => 1 / (1 + rank / 40) ** 0.7);

function skewedIndex(rng: Rng, size: number): number {
  return Math.min(size - 1, Math.floor(size * rng() ** 2));
}

function uniqueKeys<T>(n: number, make: () => T, id: (k: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (let tries = 0; out.length < n && tries < n * 20; tries++) {
    const k = make();
    if (seen.has(id(k))) continue;
    seen.add(id(k));
    out.push(k);
  }
  return out;
}

function makeIps(rng: Rng, n: number): string[] {
  return uniqueKeys(
    n,
    () => {
      const v = fmix32(Math.floor(rng() * 4294967296));
      // Avoid private, loopback and the burst scanner range 198.18/16.
      const a = 1 + ((v >>> 24) % 222);
      const first = a === 10 || a === 127 || a === 198 ? a + 1 : a;
      return `${first}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
    },
    (ip) => ip,
  );
}

function makeAgents(seed: number, pcode: number, name: string): Agent[] {
  const rng = rngOf(seed, pcode, "agents");
  const n = intIn(rng, 4, 7);
  return Array.from({ length: n }, (_, i) => {
    const raw = signed32(mix(seed, pcode, "oid", i));
    // The first agent always has a negative oid: signed 32-bit ids are normal in this API.
    const oid = i === 0 ? -Math.abs(raw || 1) : raw;
    return {
      oid,
      oname: `${name}-${i + 1}-${8080 + i}`,
      ip: `10.0.${intIn(rng, 1, 9)}.${intIn(rng, 2, 250)}`,
      okind: i % 2,
      onode: 0,
      heapBase: intIn(rng, 200, 900) * 1024 * 1024,
      flapping: i === n - 1,
    };
  });
}

export function buildWorld(seed: number, index: number, burstKeys: number, token: string): ProjectWorld {
  const pcode = pcodeAt(index);
  const rng = rngOf(seed, pcode, "world");
  const name = `${NAMES[index % NAMES.length]}${index >= NAMES.length ? `-${index}` : ""}`;
  const services = sampleIndices(rng, SERVICE_COUNT, 400);
  const sqls = sampleIndices(rng, SQL_COUNT, 240);
  const dbcs = sampleIndices(rng, DATABASES.length, 3);
  const urls = sampleIndices(rng, REMOTE_URL_COUNT, 200);
  const pickSvc = () => services[skewedIndex(rng, services.length)]!;
  return {
    seed,
    pcode,
    index,
    name,
    token,
    createTime: Date.UTC(2018, 9, 19, 7, 17, 3, 774) + index * 37 * DAY + (mix(seed, pcode) % HOUR),
    burstKeys,
    services,
    latency: services.map(() => Math.round(20 + 3000 * rng() ** 3)),
    sqlKeys: uniqueKeys(
      600,
      () => ({ sql: sqls[skewedIndex(rng, sqls.length)]!, dbc: dbcs[Math.floor(rng() * dbcs.length)]!, svc: pickSvc() }),
      (k) => `${k.sql}|${k.dbc}|${k.svc}`,
    ),
    httpcKeys: uniqueKeys(
      500,
      () => ({ url: urls[skewedIndex(rng, urls.length)]!, host: Math.floor(rng() * HOSTS.length), svc: pickSvc() }),
      (k) => `${k.url}|${k.host}|${k.svc}`,
    ),
    errorKeys: uniqueKeys(
      350,
      () => ({ cls: skewedIndex(rng, EXCEPTION_COUNT), msg: Math.floor(rng() * MESSAGE_COUNT), svc: pickSvc() }),
      (k) => `${k.cls}|${k.msg}|${k.svc}`,
    ),
    ips: makeIps(rng, 800),
    agents: makeAgents(seed, pcode, name),
  };
}

/** Load level of a cube in (0, 0.6]: a daily curve (peak ~15:00 UTC) with per-cube noise. */
export function activity(w: ProjectWorld, cube: number): number {
  const hod = (cube % DAY) / HOUR;
  const diurnal = 0.5 - 0.5 * Math.cos((2 * Math.PI * (hod - 3)) / 24);
  const noise = (mix(w.seed, w.pcode, cube, "act") % 1000) / 1000;
  return 0.02 + 0.48 * diurnal * (0.75 + 0.5 * noise) * (0.8 + 0.2 * ((w.index % 3) / 2));
}

/** The one cube per project and UTC day that holds `burstKeys` extra distinct keys per type. */
export function burstCubeOf(w: ProjectWorld, time: number): number {
  const day = dayStart(time);
  return day + (mix(w.seed, w.pcode, day, "burst") % (DAY / CUBE_MS)) * CUBE_MS;
}

export function isBurstCube(w: ProjectWorld, cube: number): boolean {
  return w.burstKeys > 0 && burstCubeOf(w, cube) === cube;
}

export function agentActive(w: ProjectWorld, agent: Agent, cube: number): boolean {
  if (!agent.flapping) return true;
  return mix(w.seed, w.pcode, Math.floor(cube / HOUR), "flap") % 3 !== 0;
}
