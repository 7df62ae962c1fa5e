// docker-compose.yml without a container engine: every apm-sync service's command and flags exist
// in the CLI (its own --help), its environment names are variables the config reads (recorded
// while the config loads), every bind mount is a file of the repository, and the pieces point at
// each other (Prometheus scrapes the worker's metrics port and loads the mounted rules, Grafana's
// provisioning finds its dashboards and every variable it reads, the push goes to the gateway).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config.ts";
import { REPO_ROOT, runCli } from "../support/child-sync.ts";

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  profiles?: string[];
}

const compose = parse(readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = Object.entries(compose.services);
const ours = services.filter(([, s]) => s.build === "." || s.image?.startsWith("apm-sync"));
const readYaml = <T>(path: string) => parse(readFileSync(join(REPO_ROOT, path), "utf8")) as T;

/** Options of a help text (`--name` and whether it takes a value), and its sub-commands. */
function readHelp(text: string): { options: Map<string, boolean>; commands: string[] } {
  const options = new Map<string, boolean>();
  for (const m of text.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)( <[^>]+>)?/gm)) options.set(m[1]!, Boolean(m[2]));
  const commands = [...(text.split("Commands:")[1] ?? "").matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!);
  return { options, commands };
}

/** Every environment variable the config reads: the env it is given records each name asked for. */
function configVariables(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_, name) => {
      if (typeof name === "string") read.add(name);
      return undefined;
    },
  });
  loadConfig({ env });
  return read;
}

/** The target of a mount `source:target[:mode]`. */
const mountOf = (service: Service, source: string) =>
  service.volumes?.map((v) => v.split(":")).find(([s]) => s === source)?.[1] ?? `(no mount of ${source})`;

describe("docker-compose.yml", () => {
  const help = new Map<string, ReturnType<typeof readHelp>>();
  beforeAll(async () => {
    const top = await runCli(["--help"], {});
    help.set("", readHelp(top.stdout));
    for (const cmd of new Set(ours.map(([, s]) => s.command?.[0] ?? ""))) {
      if (!help.get("")!.commands.includes(cmd)) continue;
      help.set(cmd, readHelp((await runCli([cmd, "--help"], {})).stdout));
    }
  }, 60_000);

  it("runs Postgres, a scheduled worker with metrics, Prometheus, the Pushgateway, Grafana and the sandbox", () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      "grafana",
      "postgres",
      "prometheus",
      "pushgateway",
      "simulate",
      "sync",
      "worker",
    ]);
    expect(compose.services.worker?.environment?.APM_SCHEDULE).toBeTruthy();
    expect(compose.services.simulate?.profiles).toEqual(["sandbox"]);
  });

  it("every apm-sync service runs a command the CLI has, with flags it has and their values", () => {
    expect(ours.length).toBeGreaterThanOrEqual(3);
    expect(help.get("")!.commands).toContain("worker");
    for (const [name, s] of ours) {
      const [cmd, ...args] = s.command ?? [];
      expect({ name, command: help.get("")!.commands.includes(cmd ?? "") }).toEqual({ name, command: true });
      const options = new Map([...help.get("")!.options, ...help.get(cmd!)!.options]);
      for (let i = 0; i < args.length; i++) {
        const flag = args[i]!;
        expect({ name, flag, known: options.has(flag) }).toEqual({ name, flag, known: true });
        if (options.get(flag)) expect({ name, flag, value: args[++i]?.startsWith("--") === false }).toEqual({ name, flag, value: true });
      }
    }
  });

  it("every environment name of an apm-sync service is a variable the config reads", () => {
    const known = configVariables();
    expect(known.has("APM_METRICS_PORT") && known.has("APM_PUSHGATEWAY_URL") && known.has("DATABASE_URL")).toBe(true);
    for (const [name, s] of ours) {
      const unknown = Object.keys(s.environment ?? {}).filter((v) => !known.has(v));
      expect({ name, unknown }).toEqual({ name, unknown: [] });
    }
  });

  it("every bind mount is a file or directory of the repository; named volumes are declared", () => {
    for (const [name, s] of services)
      for (const v of s.volumes ?? []) {
        const source = v.split(":")[0]!;
        const exists = source.startsWith(".") ? existsSync(join(REPO_ROOT, source)) : source in (compose.volumes ?? {});
        expect({ name, source, exists }).toEqual({ name, source, exists: true });
      }
  });

  it("Prometheus scrapes the worker's metrics port and the gateway the sync pushes to, and loads the mounted rules", () => {
    const prometheus = compose.services.prometheus!;
    const config = readYaml<{ rule_files: string[]; scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] }>(
      "deploy/prometheus/prometheus.yml",
    );
    expect(mountOf(prometheus, "./deploy/prometheus/prometheus.yml")).toBe("/etc/prometheus/prometheus.yml");
    expect(config.rule_files).toEqual([mountOf(prometheus, "./deploy/prometheus/apm-sync-rules.yml")]);
    const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    expect(targets).toContain(`worker:${compose.services.worker!.environment!.APM_METRICS_PORT}`);
    const push = new URL(String(compose.services.sync!.environment!.APM_PUSHGATEWAY_URL));
    expect(targets).toContain(push.host);
    for (const t of targets) expect(Object.keys(compose.services)).toContain(t.split(":")[0]);
  });

  it("Grafana's provisioning finds the dashboards and every variable it reads", () => {
    const grafana = compose.services.grafana!;
    expect(mountOf(grafana, "./deploy/grafana/provisioning")).toBe("/etc/grafana/provisioning");
    const provider = readYaml<{ providers: { options: { path: string } }[] }>("deploy/grafana/provisioning/dashboards/apm-sync.yml");
    expect(mountOf(grafana, "./deploy/grafana/dashboards")).toBe(provider.providers[0]!.options.path);
    const sources = readFileSync(join(REPO_ROOT, "deploy/grafana/provisioning/datasources/apm-sync.yml"), "utf8");
    const used = [...sources.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(0);
    for (const v of used) expect({ variable: v, set: v in (grafana.environment ?? {}) }).toEqual({ variable: v, set: true });
    // The warehouse Grafana reads is the database the workers write.
    const db = new URL(String(compose.services.worker!.environment!.DATABASE_URL));
    const env = grafana.environment!;
    expect([env.WAREHOUSE_HOST, env.WAREHOUSE_DATABASE, env.WAREHOUSE_USER]).toEqual([db.host, db.pathname.slice(1), db.username]);
    expect(compose.services.postgres!.environment).toMatchObject({ POSTGRES_USER: db.username, POSTGRES_DB: db.pathname.slice(1) });
  });
});
