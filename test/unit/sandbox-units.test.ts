// Pure parts of the sandbox: routing from the catalogue, time parsing, the cube grid, key hashes
// and the per-project universe.
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../../src/catalogue/index.ts";
import { requestPath } from "../../src/sandbox/call.ts";
import { cubesIn, javaDate, parseTime } from "../../src/sandbox/grid.ts";
import { HOSTS } from "../../src/sandbox/names.ts";
import { hostOf, svcOf } from "../../src/sandbox/payloads/names.ts";
import { buildRoutes, matchRoute } from "../../src/sandbox/router.ts";
import { buildWorld, pcodeAt } from "../../src/sandbox/world.ts";

const routes = buildRoutes(OPERATIONS);
const route = (method: string, path: string) => {
  const m = matchRoute(routes, method, path);
  return m.kind === "match" ? { id: m.op.id, params: m.params } : m.kind;
};

describe("routing from the catalogue", () => {
  it("every operation's own path routes back to it", () => {
    for (const op of OPERATIONS) {
      const params = {
        stime: 1,
        etime: 2,
        oids: "-5,7",
        host: "h",
        port: 1,
        projectCode: 9,
        groupKey: "g",
        filterkey: "url",
        filterval: "x",
      };
      expect(route(op.method, requestPath(op.id, params).split("?")[0]!)).toMatchObject({ id: op.id });
    }
  });

  it("literal segments win over placeholders; parameters are URI-decoded", () => {
    expect(route("GET", "/open/api/json/thread_count/1/2/avg")).toMatchObject({ id: "series.thread_count.avg" });
    expect(route("GET", "/open/api/json/thread_count/1/2/-5,7")).toMatchObject({
      id: "series.thread_count.oids",
      params: { oids: "-5,7" },
    });
    expect(route("GET", "/open/api/json/tx_caller/1/2/filter/url/L2E%3D")).toMatchObject({
      id: "calls.tx_caller",
      params: { filterval: "L2E=" },
    });
    expect(route("GET", "/open/api/json/group/grp****x/members")).toMatchObject({
      id: "account.group_members",
      params: { groupKey: "grp****x" },
    });
    expect(route("GET", "/open/api/json/nothing")).toBe("none");
    expect(route("GET", "/open/api/v2/agent/list")).toBe("wrong-method");
  });
});

describe("time and grid", () => {
  it("agent-list text forms are read as UTC; other operations take epoch ms only", () => {
    const now = Date.UTC(2025, 5, 1);
    expect(parseTime("20250114093000", now, true)).toBe(Date.UTC(2025, 0, 14, 9, 30));
    expect(parseTime("202501140930", now, true)).toBe(Date.UTC(2025, 0, 14, 9, 30));
    expect(parseTime("0114093015", now, true)).toBe(Date.UTC(2025, 0, 14, 9, 30, 15));
    expect(parseTime("01140930", now, true)).toBe(Date.UTC(2025, 0, 14, 9, 30));
    expect(parseTime("1736847000000", now, true)).toBe(1736847000000);
    expect(parseTime("202501140930", now, false)).toBe(202501140930);
    expect(parseTime("abc", now, false)).toBeNull();
    expect(parseTime(1.5, now, false)).toBeNull();
  });

  it("cubes: start in [stime, etime) and complete at now", () => {
    const t = Date.UTC(2025, 0, 1);
    expect(cubesIn(t, t + 900_000)).toEqual([t, t + 300_000, t + 600_000]);
    expect(cubesIn(t + 1, t + 900_001)).toEqual([t + 300_000, t + 600_000, t + 900_000]);
    expect(cubesIn(t, t + 900_000, t + 899_999)).toEqual([t, t + 300_000]);
  });

  it("Java Date text in GMT", () => {
    expect(javaDate(Date.UTC(2018, 8, 18, 8, 34, 27))).toBe("Tue Sep 18 08:34:27 GMT 2018");
  });
});

describe("keys and universe", () => {
  it("service hashes are signed and distinct, burst ones included", () => {
    const hashes = new Set<number>();
    for (let i = 0; i < 3840; i++) hashes.add(svcOf(i).hash);
    for (let i = 0; i < 12000; i++) hashes.add(svcOf(100_000 + i).hash);
    expect(hashes.size).toBe(3840 + 12000);
    expect([...hashes].some((h) => h < 0)).toBe(true);
  });

  it("host hashes: one per host name, distinct across names", () => {
    const byName = new Map<string, Set<number>>();
    for (let i = 0; i <= HOSTS.length; i++) {
      const h = hostOf(i);
      byName.set(h.name, (byName.get(h.name) ?? new Set()).add(h.hash));
    }
    expect([...byName.values()].every((s) => s.size === 1)).toBe(true);
    expect(new Set([...byName.values()].map((s) => [...s][0])).size).toBe(byName.size);
  });

  it("a project's universe: unique keys, a negative oid, pcode beyond 2^31 for the second project", () => {
    const w = buildWorld(1, 1, 12000, "t");
    expect(w.pcode).toBe(pcodeAt(1));
    expect(w.pcode).toBeGreaterThan(2 ** 31);
    expect(new Set(w.sqlKeys.map((k) => `${k.sql}|${k.dbc}|${k.svc}`)).size).toBe(w.sqlKeys.length);
    expect(new Set(w.ips).size).toBe(w.ips.length);
    expect(w.ips.some((ip) => ip.startsWith("198.18."))).toBe(false);
    expect(w.agents[0]!.oid).toBeLessThan(0);
    expect(new Set(w.agents.map((a) => a.oid)).size).toBe(w.agents.length);
    expect(buildWorld(1, 1, 12000, "t")).toEqual(w);
    expect(buildWorld(2, 1, 12000, "t").services).not.toEqual(w.services);
  });
});
