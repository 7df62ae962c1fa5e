// Key index -> the hash and text the API prints. Hashes are signed 32-bit like the real Java
// hashes; keyHash is a bijection per family, so two keys never share a hash.
import {
  BURST_BASE,
  burstIp,
  DATABASES,
  exceptionClass,
  exceptionMessage,
  geo,
  host,
  remoteUrl,
  serviceName,
  sqlStatement,
} from "../names.ts";
import { fnv1a, keyHash, mix, signed32 } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";

export const svcOf = (svc: number) => ({ hash: keyHash("service", svc), name: serviceName(svc) });
export const sqlOf = (sql: number) => ({ hash: keyHash("sql", sql), ...sqlStatement(sql) });
export const dbcOf = (dbc: number) => ({ hash: keyHash("dbc", dbc), name: DATABASES[dbc]! });
export const urlOf = (url: number) => ({ hash: keyHash("url", url), name: remoteUrl(url) });
export const classOf = (cls: number) => ({ hash: keyHash("class", cls), name: exceptionClass(cls) });
export const msgOf = (msg: number) => ({ hash: keyHash("msg", msg), name: exceptionMessage(msg) });

/** Same host name, same hash (two ports of 127.0.0.1 share it, as in the docs' samples). */
export function hostOf(i: number): { hash: number; name: string; port: number } {
  const [name, port] = host(i);
  return { hash: signed32(mix("host", name)), name, port };
}

export function ipOf(w: ProjectWorld, i: number): { ip: string; country: string; city: string } {
  const ip = i >= BURST_BASE ? burstIp(i - BURST_BASE) : w.ips[i]!;
  return { ip, ...geo(fnv1a(ip)) };
}

export const round2 = (x: number) => Math.round(x * 100) / 100;
export const ratio = (a: number, b: number) => (b > 0 ? round2(a / b) : 0);
export const stdev = (sq: number, sum: number, count: number) =>
  count > 0 ? round2(Math.sqrt(Math.max(0, sq / count - (sum / count) ** 2))) : 0;
